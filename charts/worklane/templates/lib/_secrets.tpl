{{/*
Secrets. The keys Secret is generated once: on upgrade `lookup` returns the keys already in the
cluster and they are reused byte for byte; `helm.sh/resource-policy: keep` leaves it in place on
uninstall, because losing WEBHOOK_SECRET_KEY makes every stored webhook secret unreadable.
(`helm template` and `--dry-run=client` cannot look up, so they show fresh random keys.)
*/}}

{{- define "worklane.keysSecret" -}}
{{- if not .Values.secrets.existingSecret -}}
{{- $ctx := dict "root" . "component" "keys" -}}
{{- $name := include "worklane.componentName" $ctx -}}
{{- $existing := (lookup "v1" "Secret" .Release.Namespace $name).data | default dict -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
  annotations:
    helm.sh/resource-policy: keep
type: Opaque
data:
  {{- range $key := list .Values.secrets.identitySigningKeyKey .Values.secrets.webhookSecretKeyKey }}
  {{ $key }}: {{ index $existing $key | default (randAlphaNum 64 | b64enc) }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/* The default DATABASE_URL from `database.url`, for the services (not a hook). */}}
{{- define "worklane.databaseSecret" -}}
{{- if .Values.database.url -}}
{{- $ctx := dict "root" . "component" "database" -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "worklane.componentName" $ctx }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
type: Opaque
stringData:
  DATABASE_URL: {{ .Values.database.url | quote }}
{{- end -}}
{{- end -}}

{{/* The same URL for the migration Jobs, as a hook: on install the Jobs run before any ordinary object exists. */}}
{{- define "worklane.migrationSecret" -}}
{{- if and .Values.database.url .Values.migrations.enabled -}}
{{- $ctx := dict "root" . "component" "migrate" -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ include "worklane.componentName" $ctx }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
  annotations:
    {{- include "worklane.migrationHookAnnotations" (dict "weight" -10) | nindent 4 }}
type: Opaque
stringData:
  DATABASE_URL: {{ .Values.database.url | quote }}
{{- end -}}
{{- end -}}

{{/*
What the checksum/secret pod annotation covers: the connection settings and where the keys come
from, all deterministic, so pods roll when a URL or a Secret name changes and not on every render.
*/}}
{{- define "worklane.secretChecksumInput" -}}
{{- toYaml (dict "database" .Values.database "nats" .Values.nats "secrets" .Values.secrets) -}}
{{- end -}}
