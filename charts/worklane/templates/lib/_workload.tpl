{{/*
The Deployment of one service. Takes (dict "root" $ "component" "gateway").
*/}}
{{- define "worklane.deployment" -}}
{{- $root := .root -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "worklane.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" . | nindent 4 }}
spec:
  {{- if not $values.autoscaling.enabled }}
  replicas: {{ $values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "worklane.selectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "worklane.labels" . | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "worklane.configData" . | sha256sum }}
        checksum/secret: {{ include "worklane.secretChecksumInput" $root | sha256sum }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "worklane.serviceAccountName" . }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      {{- with $values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "worklane.topologySpreadConstraints" . | trim }}
      topologySpreadConstraints:
        {{- . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "worklane.image" . }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          # The image's CMD is the command `npm start` runs: node services/<name>/dist/main.js.
          ports:
            - name: http
              containerPort: {{ $svc.http }}
              protocol: TCP
            {{- if $svc.grpc }}
            - name: grpc
              containerPort: {{ $svc.grpc }}
              protocol: TCP
            {{- end }}
            # Prometheus /metrics only; the http port never serves it.
            - name: metrics
              containerPort: {{ $root.Values.metrics.port }}
              protocol: TCP
          envFrom:
            {{- /* Listed first: of two sources with the same key the later wins, so the chart's own settings do. */}}
            {{- with $values.extraEnvFrom }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            - configMapRef:
                name: {{ include "worklane.componentName" . }}
          env:
            {{- include "worklane.secretEnv" . | nindent 12 }}
          {{- include "worklane.probes" . | nindent 10 }}
          {{- if $root.Values.preStopSleepSeconds }}
          lifecycle:
            preStop:
              sleep:
                seconds: {{ $root.Values.preStopSleepSeconds }}
          {{- end }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with $values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        # The root filesystem is read-only; Node and its libraries may still write temporary files.
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with $values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}

{{/*
Probes. /healthz answers while the process is alive, /readyz once its PostgreSQL and NATS answer.
Startup and liveness ask /healthz, so a database outage makes pods unready, never restarts them.
The token service serves its API over gRPC only: readiness uses the native gRPC health probe on
7001 (the health service that flips to NOT_SERVING on SIGTERM); it has /healthz on its ops port.
*/}}
{{- define "worklane.probes" -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $ready := dict "httpGet" (dict "path" "/readyz" "port" "http") -}}
{{- if $svc.grpcProbes -}}
{{- $ready = dict "grpc" (dict "port" (int $svc.grpc)) -}}
{{- end -}}
startupProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 2
  timeoutSeconds: 2
  failureThreshold: 60
readinessProbe:
  {{- toYaml $ready | nindent 2 }}
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
  successThreshold: 1
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
{{- end -}}

{{/* Topology spread of one service: its own list, or zone and node spread from `topologySpread`. */}}
{{- define "worklane.topologySpreadConstraints" -}}
{{- $root := .root -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- if $values.topologySpreadConstraints -}}
{{- toYaml $values.topologySpreadConstraints -}}
{{- else if $root.Values.topologySpread.enabled -}}
{{- range $key := list "topology.kubernetes.io/zone" "kubernetes.io/hostname" }}
- topologyKey: {{ $key }}
  maxSkew: {{ $root.Values.topologySpread.maxSkew }}
  whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- include "worklane.selectorLabels" $ | nindent 6 }}
  # Count only the pods of the current ReplicaSet, so a rollout is not skewed by the old one.
  matchLabelKeys:
    - pod-template-hash
{{- end }}
{{- end -}}
{{- end -}}
