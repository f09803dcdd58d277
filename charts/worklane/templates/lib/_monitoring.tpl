{{/*
Alerts and the dashboard. Every expression is scoped to the release's namespace, which the
ServiceMonitors' targets carry, so two installations never mix. Every alert links its runbook
(docs/runbooks/<AlertName>.md) in its runbook_url annotation.
*/}}

{{/*
"true" when a Prometheus Operator kind (ServiceMonitor, PrometheusRule) is to be rendered: the
API server serves monitoring.coreos.com/v1/<kind>, or metrics.prometheusOperator is `always`.
A cluster without the operator's CRDs would refuse the whole release over these objects.
Takes (dict "root" $ "kind" "ServiceMonitor").
*/}}
{{- define "worklane.prometheusOperatorServes" -}}
{{- if or (eq .root.Values.metrics.prometheusOperator "always") (.root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" .kind)) -}}
true
{{- end -}}
{{- end -}}

{{/* The annotations every alert shares besides summary and description. Takes (dict "root" $ "alert" "WorklaneServiceDown"). */}}
{{- define "worklane.alertLinks" -}}
runbook_url: {{ printf "%s/%s.md" .root.Values.metrics.prometheusRule.runbookBaseUrl .alert }}
{{- end -}}

{{- define "worklane.prometheusRule" -}}
{{- $rule := .Values.metrics.prometheusRule -}}
{{- if and $rule.enabled (include "worklane.prometheusOperatorServes" (dict "root" . "kind" "PrometheusRule")) -}}
{{- $root := . -}}
{{- $ctx := dict "root" . "component" "monitoring" -}}
{{- $ns := printf "namespace=%q" .Release.Namespace -}}
{{- $alertLabels := $rule.alertLabels | default dict -}}
{{- /* The service scrape jobs: the ServiceMonitors' targets are named after the Services. */ -}}
{{- $jobs := list -}}
{{- range $name, $_ := include "worklane.catalog" . | fromYaml -}}
{{- $jobs = append $jobs (include "worklane.componentName" (dict "root" $root "component" $name)) -}}
{{- end -}}
{{- /*
Outcomes of worklane_webhook_deliveries_total (DeliveryOutcome in services/delivery/src/metrics.ts):
a delivery fails when its retry schedule is exhausted; `gone` (the receiver answered 410) and
success end it too. Abandoned deliveries (webhook deleted or inactive) were never attempted.
*/ -}}
{{- $failedOutcome := "exhausted" -}}
{{- $finishedOutcomes := list "succeeded" "exhausted" "gone" -}}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "worklane.componentName" $ctx }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
    {{- with $rule.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
    - name: worklane.availability
      rules:
        - alert: WorklaneServiceDown
          expr: |
            sum by (namespace, job) (up{ {{- $ns }},job=~"{{ join "|" $jobs }}"}) == 0
          for: 5m
          labels:
            severity: critical
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: No pod of {{ "{{" }} $labels.job {{ "}}" }} answers Prometheus.
            description: 'Every scrape of {{ "{{" }} $labels.job {{ "}}" }} in {{ .Release.Namespace }} has failed for 5 minutes while its pods are in the Service: the service is down or its metrics port is unreachable (NetworkPolicy metricsFrom).'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneServiceDown") | nindent 12 }}
        - alert: WorklaneServiceAbsent
          expr: |
            {{- range $index, $job := $jobs }}
            {{ if $index }}or {{ end }}absent(up{ {{- $ns }},job="{{ $job }}"})
            {{- end }}
          for: 5m
          labels:
            severity: critical
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: Prometheus has no target for {{ "{{" }} $labels.job {{ "}}" }}.
            description: '{{ "{{" }} $labels.job {{ "}}" }} in {{ .Release.Namespace }} has had no ready pod to scrape for 5 minutes: its pods are not ready (crash loop, failed readiness, no replicas), or Prometheus does not select its ServiceMonitor.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneServiceAbsent") | nindent 12 }}
    - name: worklane.gateway
      rules:
        - alert: WorklaneGatewayHighErrorRatio
          expr: |
            sum(rate(worklane_http_requests_total{ {{- $ns }},service="gateway",status=~"5.."}[5m]))
              /
            sum(rate(worklane_http_requests_total{ {{- $ns }},service="gateway"}[5m]))
              > {{ $rule.gateway5xxRatio }}
          for: 5m
          labels:
            severity: critical
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: More than {{ mulf $rule.gateway5xxRatio 100 }}% of gateway responses are 5xx.
            description: 'A 5xx is a bug: {{ "{{" }} $value | humanizePercentage {{ "}}" }} of requests in {{ .Release.Namespace }} failed over 5 minutes. Check the gateway and the service behind the failing routes.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneGatewayHighErrorRatio") | nindent 12 }}
        - alert: WorklaneGatewayHighLatency
          expr: |
            histogram_quantile(0.99,
              sum by (le) (rate(worklane_http_request_duration_seconds_bucket{ {{- $ns }},service="gateway"}[5m]))
            ) > {{ $rule.gatewayLatencyP99Seconds }}
          for: 10m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: Gateway p99 latency is above {{ $rule.gatewayLatencyP99Seconds }}s.
            description: 'p99 is {{ "{{" }} $value | humanizeDuration {{ "}}" }} in {{ .Release.Namespace }}. Look at the token service (every request authenticates) and PostgreSQL.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneGatewayHighLatency") | nindent 12 }}
    - name: worklane.delivery
      rules:
        - alert: WorklaneDeliveryFailureRatioHigh
          expr: |
            sum(rate(worklane_webhook_deliveries_total{ {{- $ns }},outcome="{{ $failedOutcome }}"}[30m]))
              /
            sum(rate(worklane_webhook_deliveries_total{ {{- $ns }},outcome=~"{{ join "|" $finishedOutcomes }}"}[30m]))
              > {{ $rule.deliveryFailureRatio }}
          for: 15m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: More than {{ mulf $rule.deliveryFailureRatio 100 }}% of webhook deliveries exhaust their retries.
            description: '{{ "{{" }} $value | humanizePercentage {{ "}}" }} of finished deliveries failed in {{ .Release.Namespace }}. One dead receiver is normal; many point at egress (NetworkPolicy, proxy, DNS) or signing.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneDeliveryFailureRatioHigh") | nindent 12 }}
        - alert: WorklaneDeliveryLagHigh
          expr: |
            histogram_quantile(0.90,
              sum by (le) (rate(worklane_webhook_delivery_lag_seconds_bucket{ {{- $ns }}}[15m]))
            ) > {{ $rule.deliveryLagP90Seconds }}
          for: 15m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: Webhooks reach receivers more than {{ $rule.deliveryLagP90Seconds }}s after the event (p90).
            description: 'p90 event-to-delivery lag is {{ "{{" }} $value | humanizeDuration {{ "}}" }} in {{ .Release.Namespace }}. Check the outbox backlog, the delivery consumer and receiver timeouts.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneDeliveryLagHigh") | nindent 12 }}
        - alert: WorklaneOutboxBacklog
          expr: |
            max(worklane_outbox_backlog{ {{- $ns }}}) > {{ $rule.outboxBacklog }}
          for: 10m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: The issue outbox holds more than {{ $rule.outboxBacklog }} unpublished events.
            description: '{{ "{{" }} $value {{ "}}" }} outbox rows wait in {{ .Release.Namespace }}: the relay cannot publish to NATS JetStream. Check NATS and the issue service logs.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneOutboxBacklog") | nindent 12 }}
        - alert: WorklaneDeliveryConsumerBacklog
          expr: |
            max(worklane_delivery_consumer_pending{ {{- $ns }}}) > {{ $rule.deliveryConsumerPending }}
          for: 10m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: The delivery consumer has more than {{ $rule.deliveryConsumerPending }} pending events.
            description: '{{ "{{" }} $value {{ "}}" }} events wait for the delivery service in {{ .Release.Namespace }}: scale it out or look for slow receivers.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneDeliveryConsumerBacklog") | nindent 12 }}
    - name: worklane.events
      rules:
        - alert: WorklaneOutboxDeadLettered
          expr: |
            sum by (reason) (increase(worklane_outbox_dead_lettered_total{ {{- $ns }}}[15m])) > 0
          for: 0m
          labels:
            severity: warning
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: Issue events could never be published and were moved to the dead letters.
            description: '{{ "{{" }} $value {{ "}}" }} events ({{ "{{" }} $labels.reason {{ "}}" }}) went to outbox_dead_letters in {{ .Release.Namespace }} over 15 minutes; their teams see them as dead_lettered in the delivery log. Look at the issue service logs for the event ids and teams.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneOutboxDeadLettered") | nindent 12 }}
        - alert: WorklaneEventStreamNearlyFull
          expr: |
            (max by (stream) (worklane_stream_bytes{ {{- $ns }}} / (worklane_stream_max_bytes{ {{- $ns }}} > 0)) > {{ $rule.streamUsageRatio }})
              or
            (max by (stream) (worklane_stream_messages{ {{- $ns }}} / (worklane_stream_max_messages{ {{- $ns }}} > 0)) > {{ $rule.streamUsageRatio }})
              or
            (max by (stream) (worklane_stream_oldest_age_seconds{ {{- $ns }}} / (worklane_stream_max_age_seconds{ {{- $ns }}} > 0)) > {{ $rule.streamUsageRatio }})
          for: 5m
          labels:
            severity: critical
            {{- with $alertLabels }}{{ toYaml . | nindent 12 }}{{ end }}
          annotations:
            summary: The {{ "{{" }} $labels.stream {{ "}}" }} stream is above {{ mulf $rule.streamUsageRatio 100 }}% of a limit.
            description: 'The stream holds events the delivery service has not taken yet and is at {{ "{{" }} $value | humanizePercentage {{ "}}" }} of its byte, message or age limit in {{ .Release.Namespace }}. When full, publishing stops and events wait in the outbox: scale the delivery service or raise nats.stream limits.'
            {{- include "worklane.alertLinks" (dict "root" $root "alert" "WorklaneEventStreamNearlyFull") | nindent 12 }}
{{- end -}}
{{- end -}}

{{- define "worklane.dashboard" -}}
{{- $dashboard := .Values.metrics.dashboard -}}
{{- if $dashboard.enabled -}}
{{- $ctx := dict "root" . "component" "monitoring" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "worklane.componentName" (dict "root" . "component" "dashboard") }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
    {{- with $dashboard.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $dashboard.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  worklane.json: |-
    {{- .Files.Get "dashboards/worklane.json" | nindent 4 }}
{{- end -}}
{{- end -}}
