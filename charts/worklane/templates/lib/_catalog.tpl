{{/*
GENERATED from the service table (packages/config/src/service-table.ts) and the services' own
configuration schemas by `npm run generate -w @worklane/testing`; do not edit
(packages/testing/src/service-table.test.ts fails when this file is stale).

The services as the code defines them: ports, probes, what each one stores and which other
services it calls. Deployments, Services, environment and NetworkPolicies are all derived from
it (templates/lib/_services.tpl reads it), so a service or a call added to the table is wired
and allowed in one place.

  http / grpc      container ports (HTTP serves /healthz and /readyz; /metrics is on the
                   `metrics` port, .Values.metrics.port, in every service)
  grpcAddrEnv      variable through which clients find this service's gRPC port
  grpcProbes       its HTTP port serves probes only (its API is gRPC): readiness uses the
                   native gRPC health probe on the gRPC port
  database, schema uses PostgreSQL (its own schema, migrated by a Job) / NATS JetStream: nats
  public           reached by the ingress controller
  callsHttp        services it calls over HTTP (<NAME>_SERVICE_URL)
  callsGrpc        services it calls over gRPC (their grpcAddrEnv)
  signs            reads SIGNING_PRIVATE_KEY: it mints caller identities (gateway, console) or
                   signs its gRPC calls (issue, delivery) with its own Ed25519 key
  trusts           the principals whose public keys it reads (<PRINCIPAL>_PUBLIC_KEY): the
                   identity issuers of its API and the callers of its gRPC methods
  webhookKeys      reads WEBHOOK_SECRET_KEY (webhook secrets encrypted at rest)
  allowedCidrs     reads WEBHOOK_ALLOWED_CIDRS (private receiver ranges let through)
  lists            serves API lists: reads the page-size and API-input settings
  retryAfter       answers requests: reads UNAVAILABLE_RETRY_AFTER_SECONDS (its 503s)
  idempotency      answers POSTs with an Idempotency-Key: reads the IDEMPOTENCY_* settings
*/}}
{{- define "worklane.catalog" -}}
gateway:
  http: 8080
  public: true
  callsHttp: [project, webhook, issue, delivery, console]
  callsGrpc: [token]
  signs: true
  retryAfter: true
token:
  http: 9101
  grpc: 7001
  grpcAddrEnv: TOKEN_SERVICE_ADDR
  grpcProbes: true
  database: true
  schema: token
  trusts: [gateway, console, issue, cli]
project:
  http: 8081
  grpc: 7002
  grpcAddrEnv: PROJECT_GRPC_ADDR
  database: true
  schema: project
  trusts: [gateway, console, issue, cli]
  lists: true
  retryAfter: true
  idempotency: true
webhook:
  http: 8082
  grpc: 7003
  grpcAddrEnv: WEBHOOK_GRPC_ADDR
  database: true
  schema: webhook
  nats: true
  trusts: [gateway, console, delivery]
  webhookKeys: true
  allowedCidrs: true
  lists: true
  retryAfter: true
  idempotency: true
issue:
  http: 8083
  database: true
  schema: issue
  nats: true
  callsGrpc: [project, token]
  signs: true
  trusts: [gateway, console]
  lists: true
  retryAfter: true
  idempotency: true
delivery:
  http: 8084
  database: true
  schema: delivery
  nats: true
  callsGrpc: [webhook]
  signs: true
  trusts: [gateway, console]
  allowedCidrs: true
  lists: true
  retryAfter: true
  idempotency: true
console:
  http: 8085
  public: true
  callsHttp: [project, webhook, issue, delivery]
  callsGrpc: [token]
  signs: true
  retryAfter: true
{{- end -}}

{{/* The services in the table's order, as a YAML list. */}}
{{- define "worklane.serviceNames" -}}
[gateway, token, project, webhook, issue, delivery, console]
{{- end -}}

{{/* The principals that sign internal calls, each with its own Ed25519 key pair (@worklane/config PRINCIPALS). */}}
{{- define "worklane.signingPrincipals" -}}
[gateway, console, issue, delivery, cli]
{{- end -}}
