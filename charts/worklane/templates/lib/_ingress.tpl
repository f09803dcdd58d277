{{/* The public entry: /api to the gateway and, with consoleAtRoot, / to the console. */}}
{{- define "worklane.ingress" -}}
{{- $ingress := .Values.ingress -}}
{{- if $ingress.enabled -}}
{{- $root := . -}}
{{- $gateway := dict "root" . "component" "gateway" -}}
{{- $console := dict "root" . "component" "console" -}}
{{- $catalog := include "worklane.catalog" . | fromYaml -}}
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {{ include "worklane.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "worklane.labels" $gateway | nindent 4 }}
  {{- with $ingress.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with $ingress.className }}
  ingressClassName: {{ . }}
  {{- end }}
  {{- with $ingress.tls }}
  tls:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  rules:
    {{- range $host := $ingress.hosts }}
    - host: {{ $host | quote }}
      http:
        paths:
          - path: {{ ternary "/api" "/" $ingress.consoleAtRoot }}
            pathType: Prefix
            backend:
              service:
                name: {{ include "worklane.componentName" $gateway }}
                port:
                  name: http
          {{- if $ingress.consoleAtRoot }}
          - path: /
            pathType: Prefix
            backend:
              service:
                name: {{ include "worklane.componentName" $console }}
                port:
                  name: http
          {{- end }}
    {{- end }}
{{- end -}}
{{- end -}}
