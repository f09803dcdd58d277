{{/*
Environment of the services. Non-secret settings go to one ConfigMap per service (envFrom), so a
change shows in the pods' checksum/config annotation and rolls them; secrets are referenced by
secretKeyRef and never copied into the ConfigMap.
*/}}

{{/* Seconds of SHUTDOWN_TIMEOUT_MS: the grace period less the preStop sleep and 2 s of slack for the SIGKILL race; the drain (shutdownDrainSeconds) is part of it. */}}
{{- define "worklane.shutdownTimeoutMs" -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- $budget := sub (int $values.terminationGracePeriodSeconds) (int .root.Values.preStopSleepSeconds) | int -}}
{{- if lt (sub $budget (int .root.Values.shutdownDrainSeconds)) 5 -}}
{{- fail (printf "%s.terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds (%d) plus shutdownDrainSeconds (%d) by at least 5 seconds" .component (int $values.terminationGracePeriodSeconds) (int .root.Values.preStopSleepSeconds) (int .root.Values.shutdownDrainSeconds)) -}}
{{- end -}}
{{- mul (sub $budget 2) 1000 -}}
{{- end -}}

{{/* The ConfigMap data of one service, as YAML. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.configData" -}}
{{- $root := .root -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- $catalog := include "worklane.catalog" . | fromYaml -}}
{{- $data := dict
  "HOST" "0.0.0.0"
  "HTTP_PORT" (toString $svc.http)
  "METRICS_PORT" (toString $root.Values.metrics.port)
  "LOG_LEVEL" $root.Values.logLevel
  "SHUTDOWN_TIMEOUT_MS" (include "worklane.shutdownTimeoutMs" .)
  "SHUTDOWN_DRAIN_MS" (mul (int $root.Values.shutdownDrainSeconds) 1000 | toString)
-}}
{{- if $svc.grpc -}}
{{- $_ := set $data "GRPC_PORT" (toString $svc.grpc) -}}
{{- end -}}
{{- with $root.Values.otel.exporterOtlpEndpoint -}}
{{- $_ := set $data "OTEL_EXPORTER_OTLP_ENDPOINT" . -}}
{{- end -}}
{{- if $svc.database -}}
{{- $_ := set $data "DATABASE_SCHEMA" ($values.database.schema | default $svc.schema) -}}
{{- $_ := set $data "DATABASE_POOL_MAX" (toString $values.database.poolMax) -}}
{{- $_ := set $data "MIGRATE_ON_START" (ternary "false" "true" $root.Values.migrations.enabled) -}}
{{- end -}}
{{- if eq .component "console" -}}
{{- /* The console is reached through the gateway, which appends the address it saw to
X-Forwarded-For; behind the chart's ingress that address is the controller's, which appended
the client's before it. Trusting exactly those hops ignores whatever the client sent. */}}
{{- $_ := set $data "CONSOLE_TRUST_PROXY" (ternary "2" "1" $root.Values.ingress.enabled) -}}
{{- end -}}
{{- if and $svc.nats (not $root.Values.nats.existingSecret.name) -}}
{{- $_ := set $data "NATS_URL" $root.Values.nats.url -}}
{{- end -}}
{{- if has .component (list "issue" "delivery") -}}
{{- with $root.Values.nats.stream -}}
{{- $_ := set $data "ISSUE_EVENTS_REPLICAS" (toString (int .replicas)) -}}
{{- $_ := set $data "ISSUE_EVENTS_MAX_BYTES" (toString (int64 .maxBytes)) -}}
{{- $_ := set $data "ISSUE_EVENTS_MAX_MSGS" (toString (int64 .maxMessages)) -}}
{{- $_ := set $data "ISSUE_EVENTS_MAX_AGE_HOURS" (toString .maxAgeHours) -}}
{{- $_ := set $data "ISSUE_EVENTS_DISCARD" .discard -}}
{{- end -}}
{{- end -}}
{{- /* Webhook change notices: published by the webhook service, followed by every delivery replica. */ -}}
{{- if has .component (list "webhook" "delivery") -}}
{{- with $root.Values.nats.webhookChanges -}}
{{- $_ := set $data "WEBHOOK_CHANGES_REPLICAS" (printf "%d" (int64 .replicas)) -}}
{{- $_ := set $data "WEBHOOK_CHANGES_MAX_AGE_SECONDS" (printf "%d" (int64 .maxAgeSeconds)) -}}
{{- $_ := set $data "WEBHOOK_CHANGES_MAX_MSGS" (printf "%d" (int64 .maxMessages)) -}}
{{- end -}}
{{- end -}}
{{- if and (eq .component "webhook") $values.changePublishTimeoutMs -}}
{{- $_ := set $data "WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS" (printf "%d" (int64 $values.changePublishTimeoutMs)) -}}
{{- end -}}
{{- if and (eq .component "issue") $values.deadLetterRetentionDays -}}
{{- $_ := set $data "OUTBOX_DEAD_LETTER_RETENTION_DAYS" (toString $values.deadLetterRetentionDays) -}}
{{- end -}}
{{- if eq .component "issue" -}}
{{- $_ := set $data "ISSUE_UPDATE_OPTIMISTIC_ATTEMPTS" (printf "%d" (int64 $values.updateOptimisticAttempts)) -}}
{{- $_ := set $data "OUTBOX_HANDOVER_MAX_LOOP_UTILIZATION" (toString $values.handoverMaxLoopUtilization) -}}
{{- end -}}
{{- if eq .component "delivery" -}}
{{- with $values.retention -}}
{{- $_ := set $data "DELIVERY_RETENTION_DAYS" (toString .days) -}}
{{- $_ := set $data "DELIVERY_RETENTION_BATCH_SIZE" (toString (int .batchSize)) -}}
{{- $_ := set $data "DELIVERY_RETENTION_INTERVAL_MS" (toString (int .intervalMs)) -}}
{{- end -}}
{{- with $values.recovery -}}
{{- $_ := set $data "DELIVERY_RECOVERY_MAX_EVENTS" (printf "%d" (int64 .maxEvents)) -}}
{{- $_ := set $data "DELIVERY_RECOVERY_DEFAULT_PER_SECOND" (printf "%d" (int64 .defaultPerSecond)) -}}
{{- $_ := set $data "DELIVERY_RECOVERY_BATCH_SIZE" (printf "%d" (int64 .batchSize)) -}}
{{- end -}}
{{- with $values.log -}}
{{- $_ := set $data "DELIVERY_RESPONSE_EXCERPT_BYTES" (printf "%d" (int64 .responseExcerptBytes)) -}}
{{- $_ := set $data "DELIVERY_EXCHANGE_HEADERS_MAX_BYTES" (printf "%d" (int64 .headersMaxBytes)) -}}
{{- end -}}
{{- end -}}
{{- if $svc.allowedCidrs -}}
{{- $_ := set $data "WEBHOOK_ALLOWED_CIDRS" (join "," $root.Values.webhookAllowedCidrs) -}}
{{- end -}}
{{- /* Fair delivery: budgets, attempt timeouts, circuit breakers, name resolution. */ -}}
{{- if eq .component "delivery" -}}
{{- $delivery := $root.Values.webhookDelivery -}}
{{- $_ := set $data "DELIVERY_CONCURRENCY" (printf "%d" (int64 $delivery.concurrency)) -}}
{{- $_ := set $data "DELIVERY_CONCURRENCY_PER_TEAM" (printf "%d" (int64 $delivery.concurrencyPerTeam)) -}}
{{- $_ := set $data "DELIVERY_CONCURRENCY_PER_WEBHOOK" (printf "%d" (int64 $delivery.concurrencyPerWebhook)) -}}
{{- $_ := set $data "DELIVERY_LAUNCHES_PER_TURN" (printf "%d" (int64 $delivery.launchesPerTurn)) -}}
{{- $_ := set $data "DELIVERY_TEAM_CONNECTIONS_PER_SECOND" (toString $delivery.teamConnectionsPerSecond) -}}
{{- $_ := set $data "DELIVERY_TEAM_CONNECTIONS_BURST" (printf "%d" (int64 $delivery.teamConnectionsBurst)) -}}
{{- $_ := set $data "WEBHOOK_CONNECT_TIMEOUT_MS" (printf "%d" (int64 $delivery.connectTimeoutMs)) -}}
{{- $_ := set $data "WEBHOOK_TLS_TIMEOUT_MS" (printf "%d" (int64 $delivery.tlsTimeoutMs)) -}}
{{- $_ := set $data "WEBHOOK_HEADERS_TIMEOUT_MS" (printf "%d" (int64 $delivery.headersTimeoutMs)) -}}
{{- $_ := set $data "WEBHOOK_TIMEOUT_MS" (printf "%d" (int64 $delivery.timeoutMs)) -}}
{{- $_ := set $data "DELIVERY_BREAKER_FAILURES" (printf "%d" (int64 $delivery.breakerFailures)) -}}
{{- $_ := set $data "DELIVERY_BREAKER_COOL_DOWN_MS" (printf "%d" (int64 $delivery.breakerCoolDownMs)) -}}
{{- $_ := set $data "DELIVERY_BREAKER_MAX_COOL_DOWN_MS" (printf "%d" (int64 $delivery.breakerMaxCoolDownMs)) -}}
{{- $_ := set $data "DELIVERY_DEFER_BATCH_SIZE" (printf "%d" (int64 $delivery.deferBatchSize)) -}}
{{- $_ := set $data "DELIVERY_DNS_TIMEOUT_MS" (printf "%d" (int64 $delivery.dnsTimeoutMs)) -}}
{{- $_ := set $data "DELIVERY_DNS_MAX_TTL_MS" (printf "%d" (int64 $delivery.dnsMaxTtlMs)) -}}
{{- $_ := set $data "DELIVERY_DNS_NEGATIVE_TTL_MS" (printf "%d" (int64 $delivery.dnsNegativeTtlMs)) -}}
{{- $_ := set $data "DELIVERY_DNS_CACHE_SIZE" (printf "%d" (int64 $delivery.dnsCacheSize)) -}}
{{- $_ := set $data "DELIVERY_FANOUT_PER_TEAM_PER_SECOND" (toString $delivery.fanOutPerTeamPerSecond) -}}
{{- $_ := set $data "DELIVERY_FANOUT_PER_TEAM_BURST" (printf "%d" (int64 $delivery.fanOutPerTeamBurst)) -}}
{{- $_ := set $data "DELIVERY_ORDER_WAIT_MAX_MS" (printf "%d" (int64 $delivery.orderWaitMaxMs)) -}}
{{- $_ := set $data "DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES" (printf "%d" (int64 $delivery.webhookCacheMaxEntries)) -}}
{{- $_ := set $data "DELIVERY_WEBHOOK_CACHE_TTL_MS" (printf "%d" (int64 $delivery.webhookCacheTtlMs)) -}}
{{- $_ := set $data "DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS" (printf "%d" (int64 $delivery.webhookCacheSyncTimeoutMs)) -}}
{{- $_ := set $data "DELIVERY_WEBHOOK_CACHE_SYNC_CHECKS" (printf "%d" (int64 $delivery.webhookCacheSyncChecks)) -}}
{{- $_ := set $data "DELIVERY_FANOUT_STATEMENTS" (printf "%d" (int64 $delivery.fanOutStatements)) -}}
{{- $_ := set $data "EVENT_ACK_FLUSH_WITHIN_MS" (printf "%d" (int64 $delivery.eventAckFlushWithinMs)) -}}
{{- /* Webhooks whose every attempt fails: the notice, auto-disable, and how often they are looked for. */ -}}
{{- with $root.Values.webhookAutoDisable -}}
{{- $_ := set $data "WEBHOOK_FAILING_NOTICE_AFTER_MS" (printf "%d" (int64 .failingNoticeAfterMs)) -}}
{{- $_ := set $data "WEBHOOK_DISABLE_AFTER_MS" (printf "%d" (int64 .disableAfterMs)) -}}
{{- $_ := set $data "WEBHOOK_HEALTH_CHECK_INTERVAL_MS" (printf "%d" (int64 .checkIntervalMs)) -}}
{{- end -}}
{{- end -}}
{{- /* Page sizes of the API's lists and the per-team quotas. */ -}}
{{- if $svc.lists -}}
{{- if gt (int64 $root.Values.lists.defaultLimit) (int64 $root.Values.lists.maxLimit) -}}
{{- fail (printf "lists.defaultLimit (%d) must not exceed lists.maxLimit (%d)" (int64 $root.Values.lists.defaultLimit) (int64 $root.Values.lists.maxLimit)) -}}
{{- end -}}
{{- $_ := set $data "LIST_DEFAULT_LIMIT" (printf "%d" (int64 $root.Values.lists.defaultLimit)) -}}
{{- $_ := set $data "LIST_MAX_LIMIT" (printf "%d" (int64 $root.Values.lists.maxLimit)) -}}
{{- $_ := set $data "LIST_MAX_PAGE_BYTES" (printf "%d" (int64 $root.Values.lists.maxPageBytes)) -}}
{{- $_ := set $data "HTTP_MAX_FIELD_ERRORS" (printf "%d" (int64 $root.Values.apiInput.maxFieldErrors)) -}}
{{- $_ := set $data "HTTP_MAX_QUERY_VALUE_LENGTH" (printf "%d" (int64 $root.Values.apiInput.maxQueryValueLength)) -}}
{{- end -}}
{{- /* The services whose event path runs on a thread of its own beside their API thread. */ -}}
{{- if or (eq .component "issue") (eq .component "delivery") -}}
{{- $_ := set $data "API_THREAD_NICE" (printf "%d" (int64 $root.Values.serviceThreads.apiThreadNice)) -}}
{{- end -}}
{{- /* The 503 of a request whose dependency cannot answer: how long it asks the client to wait. */ -}}
{{- if $svc.retryAfter -}}
{{- $_ := set $data "UNAVAILABLE_RETRY_AFTER_SECONDS" (printf "%d" (int64 $root.Values.unavailable.retryAfterSeconds)) -}}
{{- end -}}
{{- /* POSTs with an Idempotency-Key: how long a first answer is replayed, and its store's upkeep. */ -}}
{{- if $svc.idempotency -}}
{{- with $root.Values.idempotency -}}
{{- $_ := set $data "IDEMPOTENCY_KEY_TTL_HOURS" (printf "%d" (int64 .keyTtlHours)) -}}
{{- $_ := set $data "IDEMPOTENCY_LEASE_MS" (printf "%d" (int64 .leaseMs)) -}}
{{- $_ := set $data "IDEMPOTENCY_RESPONSE_MAX_BYTES" (printf "%d" (int64 .responseMaxBytes)) -}}
{{- $_ := set $data "IDEMPOTENCY_RETENTION_INTERVAL_MS" (printf "%d" (int64 .retentionIntervalMs)) -}}
{{- $_ := set $data "IDEMPOTENCY_RETENTION_BATCH_SIZE" (printf "%d" (int64 .retentionBatchSize)) -}}
{{- end -}}
{{- end -}}
{{- if eq .component "gateway" -}}
{{- $_ := set $data "REQUEST_BODY_MAX_BYTES" (printf "%d" (int64 $root.Values.apiInput.maxBodyBytes)) -}}
{{- with $root.Values.apiRateLimits -}}
{{- $_ := set $data "RATE_LIMIT_PER_SECOND" (toString .perTokenPerSecond) -}}
{{- $_ := set $data "RATE_LIMIT_BURST" (printf "%d" (int64 .perTokenBurst)) -}}
{{- $_ := set $data "RATE_LIMIT_TEAM_PER_SECOND" (toString .perTeamPerSecond) -}}
{{- $_ := set $data "RATE_LIMIT_TEAM_BURST" (printf "%d" (int64 .perTeamBurst)) -}}
{{- $_ := set $data "RATE_LIMIT_RESPONSE_UNIT_BYTES" (printf "%d" (int64 .responseUnitBytes)) -}}
{{- $_ := set $data "RATE_LIMIT_REFUSAL_DELAY_MAX_MS" (printf "%d" (int64 .refusalDelayMaxMs)) -}}
{{- $_ := set $data "RATE_LIMIT_REFUSALS_HELD_MAX" (printf "%d" (int64 .refusalsHeldMax)) -}}
{{- $_ := set $data "RATE_LIMIT_SYNC_INTERVAL_MS" (printf "%d" (int64 .syncIntervalMs)) -}}
{{- $_ := set $data "RATE_LIMIT_SYNC_TIMEOUT_MS" (printf "%d" (int64 .syncTimeoutMs)) -}}
{{- end -}}
{{- $_ := set $data "GATEWAY_AUTH_CACHE_TTL_MS" (printf "%d" (int64 $root.Values.apiAuthentication.cacheTtlMs)) -}}
{{- $_ := set $data "GATEWAY_TOKEN_CHANGES_INTERVAL_MS" (printf "%d" (int64 $root.Values.apiAuthentication.changesIntervalMs)) -}}
{{- end -}}
{{- /* The token service keeps the gateways' shared rate-limit buckets and the token change feed. */ -}}
{{- if eq .component "token" -}}
{{- $_ := set $data "RATE_LIMIT_SWEEP_INTERVAL_MS" (printf "%d" (int64 $root.Values.apiRateLimits.sharedSweepIntervalMs)) -}}
{{- with $root.Values.apiAuthentication -}}
{{- $_ := set $data "TOKEN_CHANGES_LEASE_MS" (printf "%d" (int64 .changesLeaseMs)) -}}
{{- $_ := set $data "TOKEN_CHANGES_RETENTION_SECONDS" (printf "%d" (int64 .changesRetentionSeconds)) -}}
{{- $_ := set $data "TOKEN_CACHE_MAX_TTL_MS" (printf "%d" (int64 .tokenLeaseMaxMs)) -}}
{{- end -}}
{{- end -}}
{{- $quotas := $root.Values.teamQuotas -}}
{{- if eq .component "project" -}}
{{- $_ := set $data "TEAM_MAX_ORGANIZATIONS" (printf "%d" (int64 $quotas.organizations)) -}}
{{- $_ := set $data "TEAM_MAX_PROJECTS" (printf "%d" (int64 $quotas.projects)) -}}
{{- else if eq .component "webhook" -}}
{{- $_ := set $data "TEAM_MAX_WEBHOOKS" (printf "%d" (int64 $quotas.webhooks)) -}}
{{- with $root.Values.webhookEndpoints -}}
{{- if gt (int64 .secretOverlapDefaultSeconds) (int64 .secretOverlapMaxSeconds) -}}
{{- fail (printf "webhookEndpoints.secretOverlapDefaultSeconds (%d) must not exceed webhookEndpoints.secretOverlapMaxSeconds (%d)" (int64 .secretOverlapDefaultSeconds) (int64 .secretOverlapMaxSeconds)) -}}
{{- end -}}
{{- $_ := set $data "WEBHOOK_PREVIOUS_SECRETS_MAX" (printf "%d" (int64 .previousSecretsMax)) -}}
{{- $_ := set $data "WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS" (printf "%d" (int64 .secretOverlapDefaultSeconds)) -}}
{{- $_ := set $data "WEBHOOK_SECRET_OVERLAP_MAX_SECONDS" (printf "%d" (int64 .secretOverlapMaxSeconds)) -}}
{{- $_ := set $data "WEBHOOK_RATE_LIMIT_MAX_PER_SECOND" (printf "%d" (int64 .rateLimitMaxPerSecond)) -}}
{{- end -}}
{{- else if eq .component "token" -}}
{{- $_ := set $data "TEAM_MAX_API_TOKENS" (printf "%d" (int64 $quotas.apiTokens)) -}}
{{- end -}}
{{- range $target := $svc.callsHttp | default list -}}
{{- $port := (index $catalog $target).http -}}
{{- $_ := set $data (printf "%s_SERVICE_URL" (upper $target)) (printf "http://%s:%v" (include "worklane.componentName" (dict "root" $root "component" $target)) $port) -}}
{{- end -}}
{{- range $target := $svc.callsGrpc | default list -}}
{{- $server := index $catalog $target -}}
{{- $_ := set $data $server.grpcAddrEnv (printf "%s:%v" (include "worklane.componentName" (dict "root" $root "component" $target)) $server.grpc) -}}
{{- end -}}
{{- range $name, $value := merge (deepCopy ($values.env | default dict)) ($root.Values.env | default dict) -}}
{{- $_ := set $data $name (toString $value) -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/* Where one service's DATABASE_URL comes from, as YAML {name, key}. */}}
{{- define "worklane.databaseSecretRef" -}}
{{- $root := .root -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
{{- if $values.database.existingSecret.name -}}
name: {{ $values.database.existingSecret.name }}
key: {{ $values.database.existingSecret.key }}
{{- else if $root.Values.database.url -}}
name: {{ include "worklane.componentName" (dict "root" $root "component" "database") }}
key: DATABASE_URL
{{- else if $root.Values.database.existingSecret.name -}}
name: {{ $root.Values.database.existingSecret.name }}
key: {{ $root.Values.database.existingSecret.key }}
{{- else -}}
{{- fail (printf "%s needs PostgreSQL: set database.url, database.existingSecret.name or %s.database.existingSecret.name" .component .component) -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret with the webhook encryption key. */}}
{{- define "worklane.keysSecretName" -}}
{{- .Values.secrets.existingSecret | default (include "worklane.componentName" (dict "root" . "component" "keys")) -}}
{{- end -}}

{{/*
OTEL_RESOURCE_ATTRIBUTES of one service: where its spans come from (release, image tag, namespace,
Deployment, pod, node), then otel.resourceAttributes, which wins on a clash. The pod and node
names are the downward-API variables declared before it. Takes (dict "root" $ "component" "gateway").
*/}}
{{- define "worklane.resourceAttributes" -}}
{{- $root := .root -}}
{{- $own := (include "worklane.serviceValues" . | fromYaml).image | default dict -}}
{{- $attributes := dict
  "service.namespace" $root.Release.Name
  "service.version" ($own.tag | default $root.Values.image.tag | default $root.Chart.AppVersion | toString)
  "k8s.namespace.name" $root.Release.Namespace
  "k8s.deployment.name" (include "worklane.componentName" .)
  "k8s.pod.name" "$(K8S_POD_NAME)"
  "k8s.node.name" "$(K8S_NODE_NAME)"
-}}
{{- $attributes = merge (deepCopy ($root.Values.otel.resourceAttributes | default dict)) $attributes -}}
{{- $pairs := list -}}
{{- range $name := keys $attributes | sortAlpha -}}
{{- $pairs = append $pairs (printf "%s=%s" $name (index $attributes $name | toString)) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* The env list of one service's container: secrets and the downward API. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.secretEnv" -}}
{{- $root := .root -}}
{{- $svc := include "worklane.service" . | fromYaml -}}
{{- $values := include "worklane.serviceValues" . | fromYaml -}}
- name: OTEL_SERVICE_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.labels['app.kubernetes.io/component']
- name: K8S_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: K8S_NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ include "worklane.resourceAttributes" . | quote }}
{{- if $svc.signs }}
{{- /* Its own private key: no other pod references it. */}}
- name: SIGNING_PRIVATE_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "worklane.signingSecretName" (dict "root" $root "principal" .component) }}
      key: tls.key
{{- end }}
{{- range $principal := $svc.trusts | default list }}
{{- /* Only the certificate (public key) of the other principals' Secrets. */}}
- name: {{ upper $principal }}_PUBLIC_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "worklane.signingSecretName" (dict "root" $root "principal" $principal) }}
      key: tls.crt
{{- end }}
{{- if $svc.webhookKeys }}
- name: WEBHOOK_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "worklane.keysSecretName" $root }}
      key: {{ $root.Values.secrets.webhookSecretKeyKey }}
{{- end }}
{{- if $svc.database }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- include "worklane.databaseSecretRef" . | nindent 6 }}
{{- end }}
{{- if and $svc.nats $root.Values.nats.existingSecret.name }}
- name: NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.nats.existingSecret.name }}
      key: {{ $root.Values.nats.existingSecret.key }}
{{- end }}
{{- with $values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
