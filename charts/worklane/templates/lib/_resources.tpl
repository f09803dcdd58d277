{{/*
The small per-service objects. Each takes (dict "root" $ "component" "gateway").
*/}}

{{- define "worklane.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
data:
  {{- include "worklane.configData" . | nindent 2 }}
{{- end -}}

{{- define "worklane.k8sService" -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
  {{- with $values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: ClusterIP
  selector:
    {{- include "worklane.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ $svc.http }}
      targetPort: http
      protocol: TCP
      appProtocol: http
    {{- if $svc.grpc }}
    - name: grpc
      port: {{ $svc.grpc }}
      targetPort: grpc
      protocol: TCP
      appProtocol: kubernetes.io/h2c
    {{- end }}
    - name: metrics
      port: {{ .root.Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
      appProtocol: http
{{- end -}}

{{- define "worklane.serviceAccount" -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- if $values.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "worklane.serviceAccountName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
  {{- with $values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
# No service needs the Kubernetes API.
automountServiceAccountToken: false
{{- end -}}
{{- end -}}

{{- define "worklane.hpa" -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- if $values.autoscaling.enabled -}}
{{- if gt (int $values.autoscaling.minReplicas) (int $values.autoscaling.maxReplicas) -}}
{{- fail (printf "%s.autoscaling.minReplicas must not exceed maxReplicas" .component) -}}
{{- end -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "worklane.componentName" . }}
  minReplicas: {{ $values.autoscaling.minReplicas }}
  maxReplicas: {{ $values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $values.autoscaling.targetCPUUtilizationPercentage }}
    {{- if $values.autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ $values.autoscaling.targetMemoryUtilizationPercentage }}
    {{- end }}
  behavior:
    scaleDown:
      # Scale in slowly: delivery retries and token caches prefer a stable pool.
      stabilizationWindowSeconds: 300
{{- end -}}
{{- end -}}

{{/*
A PodDisruptionBudget for a service that can run more than one pod: with a single pod, a budget
that keeps it up would block every node drain, and one that lets it go protects nothing.
*/}}
{{- define "worklane.pdb" -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- $pods := ternary (int $values.autoscaling.maxReplicas) (int $values.replicaCount) $values.autoscaling.enabled -}}
{{- if and $values.pdb.enabled (gt $pods 1) -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $values.pdb.maxUnavailable }}
  # Let a node drain evict pods that never became ready instead of waiting on them.
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector:
    matchLabels:
      {{- include "worklane.selectorLabels" . | nindent 6 }}
{{- end -}}
{{- end -}}

{{- define "worklane.serviceMonitor" -}}
{{- $monitor := .root.Values.metrics.serviceMonitor -}}
{{- if and $monitor.enabled (include "worklane.prometheusOperatorServes" (dict "root" .root "kind" "ServiceMonitor")) -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
    {{- with $monitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "worklane.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ .root.Release.Namespace }}
  endpoints:
    - port: metrics
      path: /metrics
      # The metrics carry their own `service` label (gateway, token, ...), which the alerts and the
      # dashboard select on; without this Prometheus would overwrite it with the Service's name.
      honorLabels: true
      interval: {{ $monitor.interval }}
      scrapeTimeout: {{ $monitor.scrapeTimeout }}
{{- end -}}
{{- end -}}
