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
  {{ .Values.secrets.webhookSecretKeyKey }}: {{ index $existing .Values.secrets.webhookSecretKeyKey | default (randAlphaNum 64 | b64enc) }}
{{- end -}}
{{- end -}}

{{/*
The principals that sign (worklane.signingPrincipals, in _catalog.tpl): the gateway and the console
mint caller identities, the issue and delivery services sign their gRPC calls, the operator CLI
signs its calls to the token and project services. Each has its own Ed25519 key pair.
*/}}

{{/* Name of a principal's signing Secret (tls.key, tls.crt). Takes (dict "root" $ "principal" "gateway"). */}}
{{- define "worklane.signingSecretName" -}}
{{- $existing := index (.root.Values.secrets.signingKeys.existingSecrets | default dict) .principal -}}
{{- $existing | default (include "worklane.componentName" (dict "root" .root "component" (printf "signing-%s" .principal))) -}}
{{- end -}}

{{/*
One kubernetes.io/tls Secret per principal without an existing one: tls.key is its Ed25519
private key (PKCS#8 PEM), tls.crt a self-signed certificate holding the public key, from which the
services read it. Generated once; on upgrade `lookup` returns the pair in the cluster and it is
reused byte for byte; kept on uninstall like the keys Secret. Only the owner's pod references
tls.key; the others reference tls.crt alone.
*/}}
{{- define "worklane.signingSecrets" -}}
{{- $root := . -}}
{{- range $principal := include "worklane.signingPrincipals" $root | fromYamlArray }}
{{- if not (index ($root.Values.secrets.signingKeys.existingSecrets | default dict) $principal) }}
{{- $ctx := dict "root" $root "component" (printf "signing-%s" $principal) }}
{{- $name := include "worklane.componentName" $ctx }}
{{- $existing := (lookup "v1" "Secret" $root.Release.Namespace $name).data | default dict }}
{{- $key := "" }}
{{- $crt := "" }}
{{- if and (index $existing "tls.key") (index $existing "tls.crt") }}
{{- $key = index $existing "tls.key" }}
{{- $crt = index $existing "tls.crt" }}
{{- else }}
{{- $pair := genSelfSignedCertWithKey (printf "worklane-%s" $principal) nil nil 36500 (genPrivateKey "ed25519") }}
{{- $key = $pair.Key | b64enc }}
{{- $crt = $pair.Cert | b64enc }}
{{- end }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" $ctx | nindent 4 }}
    worklane.dev/signing-principal: {{ $principal }}
  annotations:
    helm.sh/resource-policy: keep
type: kubernetes.io/tls
data:
  tls.key: {{ $key }}
  tls.crt: {{ $crt }}
{{- end }}
{{- end }}
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
