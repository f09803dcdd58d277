{{/* Checks across values that values.schema.json cannot express; renders nothing. */}}
{{- define "worklane.validate" -}}
{{- range $name := include "worklane.databaseServices" $ | fromYamlArray -}}
{{- $_ := include "worklane.databaseSecretRef" (dict "root" $ "component" $name) -}}
{{- end -}}
{{- range $principal, $_ := .Values.secrets.signingKeys.existingSecrets | default dict -}}
{{- if not (has $principal (include "worklane.signingPrincipals" $ | fromYamlArray)) -}}
{{- fail (printf "secrets.signingKeys.existingSecrets: %q is not a signing principal (gateway, console, issue, delivery, cli)" $principal) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) -}}
{{- fail "ingress.enabled needs at least one host in ingress.hosts" -}}
{{- end -}}
{{- if and .Values.nats.existingSecret.name (not .Values.nats.existingSecret.key) -}}
{{- fail "nats.existingSecret.key must not be empty" -}}
{{- end -}}
{{- end -}}
