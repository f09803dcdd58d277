{{/* Checks across values that values.schema.json cannot express; renders nothing. */}}
{{- define "worklane.validate" -}}
{{- range $name := include "worklane.databaseServices" $ | fromYamlArray -}}
{{- $_ := include "worklane.databaseSecretRef" (dict "root" $ "component" $name) -}}
{{- end -}}
{{- if eq .Values.secrets.identitySigningKeyKey .Values.secrets.webhookSecretKeyKey -}}
{{- fail "secrets.identitySigningKeyKey and secrets.webhookSecretKeyKey must name different keys" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) -}}
{{- fail "ingress.enabled needs at least one host in ingress.hosts" -}}
{{- end -}}
{{- if and .Values.nats.existingSecret.name (not .Values.nats.existingSecret.key) -}}
{{- fail "nats.existingSecret.key must not be empty" -}}
{{- end -}}
{{- end -}}
