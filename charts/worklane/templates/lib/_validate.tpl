{{/* Checks across values that values.schema.json cannot express; renders nothing. */}}
{{- define "worklane.validate" -}}
{{- range $name := include "worklane.databaseServices" $ | fromYamlArray -}}
{{- $_ := include "worklane.databaseSecretRef" (dict "root" $ "component" $name) -}}
{{- end -}}
{{- $principals := include "worklane.signingPrincipals" $ | fromYamlArray -}}
{{- range $principal, $_ := .Values.secrets.signingKeys.existingSecrets | default dict -}}
{{- if not (has $principal $principals) -}}
{{- fail (printf "secrets.signingKeys.existingSecrets: %q is not a signing principal (%s)" $principal (join ", " $principals)) -}}
{{- end -}}
{{- end -}}
{{- $services := include "worklane.serviceNames" $ | fromYamlArray -}}
{{- range $component := .Values.networkPolicy.internetEgress.components -}}
{{- if not (has $component $services) -}}
{{- fail (printf "networkPolicy.internetEgress.components: %q is not a Worklane service (%s)" $component (join ", " $services)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) -}}
{{- fail "ingress.enabled needs at least one host in ingress.hosts" -}}
{{- end -}}
{{- range $name, $_ := include "worklane.catalog" $ | fromYaml -}}
{{- if or (hasKey ($.Values.env | default dict) "OTEL_RESOURCE_ATTRIBUTES") (hasKey ((index $.Values $name | default dict).env | default dict) "OTEL_RESOURCE_ATTRIBUTES") -}}
{{- fail "set OpenTelemetry resource attributes in otel.resourceAttributes, not as OTEL_RESOURCE_ATTRIBUTES in env: the chart builds that variable itself" -}}
{{- end -}}
{{- end -}}
{{- range $cidr := .Values.networkPolicy.internetEgress.except -}}
{{- if regexMatch "(?i)^::ffff:" $cidr -}}
{{- fail (printf "%s is an IPv4-mapped IPv6 range, which Kubernetes reads as IPv4 and refuses under ::/0: list the IPv4 range instead (networkPolicy.internetEgress.except)" $cidr) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.nats.existingSecret.name (not .Values.nats.existingSecret.key) -}}
{{- fail "nats.existingSecret.key must not be empty" -}}
{{- end -}}
{{- end -}}
