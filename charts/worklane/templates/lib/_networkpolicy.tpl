{{/*
NetworkPolicies, derived from the catalog: a service accepts traffic only from the services
that call it (and the ingress controller for the public ones), and sends only to the services it
calls, DNS, PostgreSQL, NATS and, for the delivery service, the public internet.
*/}}

{{/* A podSelector peer for one component. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.componentPeer" -}}
- podSelector:
    matchLabels:
      {{- include "worklane.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* An egress rule (dict "to" peers "ports" numbers "protocols" list) as a one-item list; an empty "to" means any destination. */}}
{{- define "worklane.egressRule" -}}
{{- $ports := list -}}
{{- range $port := .ports -}}
{{- range $protocol := $.protocols | default (list "TCP") -}}
{{- $ports = append $ports (dict "port" (int $port) "protocol" $protocol) -}}
{{- end -}}
{{- end -}}
{{- $rule := dict "ports" $ports -}}
{{- with .to -}}
{{- $_ := set $rule "to" . -}}
{{- end -}}
{{- list $rule | toYaml -}}
{{- end -}}

{{- define "worklane.networkPolicy" -}}
{{- $root := .root -}}
{{- $np := $root.Values.networkPolicy -}}
{{- if $np.enabled -}}
{{- $component := .component -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $catalog := include "worklane.catalog" . | fromYaml -}}
{{- $httpCallers := list -}}
{{- $grpcCallers := list -}}
{{- range $name, $other := $catalog -}}
{{- if has $component ($other.callsHttp | default list) -}}{{- $httpCallers = append $httpCallers $name -}}{{- end -}}
{{- if has $component ($other.callsGrpc | default list) -}}{{- $grpcCallers = append $grpcCallers $name -}}{{- end -}}
{{- end -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "worklane.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  {{- /* A service that nobody calls, that is not public and not scraped accepts nothing: an empty list, never null. */}}
  {{- $scraped := and $root.Values.metrics.serviceMonitor.enabled $np.metricsFrom }}
  {{- /* The chart's `helm test` pod (templates/tests) calls the gateway, as a client would. */}}
  {{- $tested := eq $component "gateway" }}
  ingress:{{ if not (or (and $svc.public $np.ingressFrom) $httpCallers $grpcCallers $scraped $tested) }} []{{ end }}
    {{- if and $svc.public $np.ingressFrom }}
    # The ingress controller.
    - from:
        {{- toYaml $np.ingressFrom | nindent 8 }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- if $httpCallers }}
    # Services that call this one over HTTP.
    - from:
        {{- range $caller := $httpCallers }}
        {{- include "worklane.componentPeer" (dict "root" $root "component" $caller) | nindent 8 }}
        {{- end }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- if $tested }}
    # The release's `helm test` pod.
    - from:
        {{- include "worklane.componentPeer" (dict "root" $root "component" "test") | nindent 8 }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- if $grpcCallers }}
    # Services that call this one over gRPC.
    - from:
        {{- range $caller := $grpcCallers }}
        {{- include "worklane.componentPeer" (dict "root" $root "component" $caller) | nindent 8 }}
        {{- end }}
      ports:
        - port: grpc
          protocol: TCP
    {{- end }}
    {{- if and $root.Values.metrics.serviceMonitor.enabled $np.metricsFrom }}
    # Prometheus scraping /metrics, on the metrics port only.
    - from:
        {{- toYaml $np.metricsFrom | nindent 8 }}
      ports:
        - port: metrics
          protocol: TCP
    {{- end }}
  egress:
    # DNS.
    {{- include "worklane.egressRule" (dict "to" $np.dnsTo "ports" (list 53) "protocols" (list "UDP" "TCP")) | nindent 4 }}
    {{- range $target := $svc.callsHttp | default list }}
    # {{ $target }} over HTTP.
    {{- include "worklane.egressRule" (dict "to" (include "worklane.componentPeer" (dict "root" $root "component" $target) | fromYamlArray) "ports" (list (index $catalog $target).http)) | nindent 4 }}
    {{- end }}
    {{- range $target := $svc.callsGrpc | default list }}
    # {{ $target }} over gRPC.
    {{- include "worklane.egressRule" (dict "to" (include "worklane.componentPeer" (dict "root" $root "component" $target) | fromYamlArray) "ports" (list (index $catalog $target).grpc)) | nindent 4 }}
    {{- end }}
    {{- if $svc.database }}
    # PostgreSQL.
    {{- include "worklane.egressRule" $np.postgres | nindent 4 }}
    {{- end }}
    {{- if $svc.nats }}
    # NATS.
    {{- include "worklane.egressRule" $np.nats | nindent 4 }}
    {{- end }}
    {{- if $root.Values.otel.exporterOtlpEndpoint }}
    # The OTLP trace collector.
    {{- include "worklane.egressRule" $np.otlp | nindent 4 }}
    {{- end }}
    {{- if has $component $np.internetEgress.components }}
    {{- include "worklane.internetEgress" $root | nindent 4 }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}
{{- end -}}

{{/*
The public internet, with every private, loopback, link-local (metadata), CGNAT and reserved range
cut out for IPv4 and IPv6, and the ranges the operator allowed in webhookAllowedCidrs added back.
*/}}
{{- define "worklane.internetEgress" -}}
{{- $rule := .Values.networkPolicy.internetEgress -}}
{{- $v4 := list -}}
{{- $v6 := list -}}
{{- range $cidr := $rule.except -}}
{{- if contains ":" $cidr -}}{{- $v6 = append $v6 $cidr -}}{{- else -}}{{- $v4 = append $v4 $cidr -}}{{- end -}}
{{- end -}}
# The public internet (webhook receivers), but no cluster or private range.
- to:
    - ipBlock:
        cidr: 0.0.0.0/0
        {{- with $v4 }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
    - ipBlock:
        cidr: ::/0
        {{- with $v6 }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
    {{- range $cidr := .Values.webhookAllowedCidrs }}
    - ipBlock:
        cidr: {{ $cidr }}
    {{- end }}
  {{- with $rule.ports }}
  ports:
    {{- range $port := . }}
    - port: {{ $port }}
      protocol: TCP
    {{- end }}
  {{- end }}
{{- end -}}

{{/* The migration Jobs' policy: no ingress; egress to DNS and PostgreSQL only. A hook, so it exists before the Jobs on install. */}}
{{- define "worklane.migrationNetworkPolicy" -}}
{{- $np := .Values.networkPolicy -}}
{{- if and $np.enabled .Values.migrations.enabled -}}
{{- $ctx := dict "root" . "component" "migrate" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "worklane.componentName" $ctx }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
  annotations:
    {{- include "worklane.migrationHookAnnotations" (dict "weight" -10) | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "worklane.selectorLabels" $ctx | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  egress:
    {{- include "worklane.egressRule" (dict "to" $np.dnsTo "ports" (list 53) "protocols" (list "UDP" "TCP")) | nindent 4 }}
    {{- include "worklane.egressRule" $np.postgres | nindent 4 }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}
{{- end -}}
