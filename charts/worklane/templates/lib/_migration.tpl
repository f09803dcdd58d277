{{/*
Migrations run before the new pods start: one pre-install/pre-upgrade Job per service with a
database, in that service's own image (every image carries the worklane CLI), with that service's
DATABASE_URL and DATABASE_SCHEMA, so a service's schema always matches the code about to run it.
A failed Job fails the install or upgrade and is kept for `kubectl logs`; a succeeded one is removed.
*/}}

{{- define "worklane.migrationHookAnnotations" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/* Takes (dict "root" $ "component" "token"). */}}
{{- define "worklane.migrationJob" -}}
{{- $root := .root -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- if and $root.Values.migrations.enabled $svc.database -}}
{{- $migrate := dict "root" $root "component" "migrate" -}}
{{- $dbRef := include "worklane.databaseSecretRef" . | fromYaml -}}
{{- if eq $dbRef.name (include "worklane.componentName" (dict "root" $root "component" "database")) -}}
{{- /* The chart's own database Secret is not there yet on install: use the hook copy. */ -}}
{{- $dbRef = dict "name" (include "worklane.componentName" $migrate) "key" "DATABASE_URL" -}}
{{- end -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "worklane.componentName" (dict "root" $root "component" (printf "migrate-%s" .component)) }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "worklane.labels" $migrate | nindent 4 }}
    worklane.dev/service: {{ .component }}
  annotations:
    {{- include "worklane.migrationHookAnnotations" (dict "weight" -5) | nindent 4 }}
spec:
  backoffLimit: {{ $root.Values.migrations.backoffLimit }}
  activeDeadlineSeconds: {{ $root.Values.migrations.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- include "worklane.labels" $migrate | nindent 8 }}
        worklane.dev/service: {{ .component }}
      {{- with $root.Values.migrations.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      enableServiceLinks: false
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
      containers:
        - name: migrate
          image: {{ include "worklane.image" . }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          # The image's working directory is the service's folder; the CLI sits at the image's root.
          command:
            - node
            - /app/tools/worklane/bin/worklane.mjs
            - migrate
            - --service
            - {{ .component }}
          env:
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef:
                  {{- toYaml $dbRef | nindent 18 }}
            - name: DATABASE_SCHEMA
              value: {{ $values.database.schema | default .component | quote }}
            - name: LOG_LEVEL
              value: {{ $root.Values.logLevel | quote }}
            - name: OTEL_SERVICE_NAME
              value: {{ printf "%s-migrate" .component | quote }}
            {{- /* The service's own additions (a CA bundle for PostgreSQL TLS, say) apply to its migrations too. */}}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- with $values.extraEnvFrom }}
          envFrom:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          resources:
            {{- toYaml $root.Values.migrations.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with $values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with $values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}
{{- end -}}
