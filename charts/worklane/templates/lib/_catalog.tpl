{{/*
The services as the code defines them: ports, probes, what each one stores and which other
services it calls. Deployments, Services, environment and NetworkPolicies are all derived from
this one table, so a call added here is wired and allowed in one place.

  http / grpc      container ports (HTTP serves /healthz and /readyz; /metrics is on the
                   `metrics` port, .Values.metrics.port, in every service)
  grpcProbes       readiness and startup use the native gRPC health probe on the gRPC port
  grpcAddrEnv      variable through which clients find this service's gRPC port
  database, nats   uses PostgreSQL (own schema, migrations) / NATS JetStream
  public           reached by the ingress controller
  callsHttp        services it calls over HTTP (<NAME>_SERVICE_URL)
  callsGrpc        services it calls over gRPC (their grpcAddrEnv)
  signs            holds its own Ed25519 signing key (SIGNING_PRIVATE_KEY): it mints caller
                   identities (gateway, console) or signs its gRPC calls (issue, delivery)
  trusts           principals whose public keys it holds (<PRINCIPAL>_PUBLIC_KEY): the identity
                   issuers of its API and the callers of its gRPC methods
*/}}
{{- define "worklane.catalog" -}}
gateway:
  http: 8080
  public: true
  signs: true
  callsHttp: [project, webhook, issue, delivery, console]
  callsGrpc: [token]
token:
  http: 9101
  grpc: 7001
  grpcProbes: true
  grpcAddrEnv: TOKEN_SERVICE_ADDR
  database: true
  trusts: [gateway, console, issue, cli]
project:
  http: 8081
  grpc: 7002
  grpcAddrEnv: PROJECT_GRPC_ADDR
  database: true
  trusts: [gateway, console, issue, cli]
webhook:
  http: 8082
  grpc: 7003
  grpcAddrEnv: WEBHOOK_GRPC_ADDR
  database: true
  trusts: [gateway, console, delivery]
  webhookKeys: true
  allowedCidrs: true
issue:
  http: 8083
  database: true
  nats: true
  callsGrpc: [project, token]
  signs: true
  trusts: [gateway, console]
delivery:
  http: 8084
  database: true
  nats: true
  allowedCidrs: true
  callsGrpc: [webhook]
  signs: true
  trusts: [gateway, console]
console:
  http: 8085
  public: true
  callsHttp: [project, webhook, issue, delivery]
  callsGrpc: [token]
  signs: true
{{- end -}}

{{/* One service's catalog entry as a dict. Takes (dict "root" $ "component" "gateway"). */}}
{{- define "worklane.service" -}}
{{- $catalog := include "worklane.catalog" . | fromYaml -}}
{{- if not (hasKey $catalog .component) -}}
{{- fail (printf "unknown Worklane service %q" .component) -}}
{{- end -}}
{{- index $catalog .component | toYaml -}}
{{- end -}}

{{/* Names of the services that use PostgreSQL, as a YAML list. */}}
{{- define "worklane.databaseServices" -}}
{{- $names := list -}}
{{- range $name, $svc := include "worklane.catalog" . | fromYaml -}}
{{- if $svc.database -}}{{- $names = append $names $name -}}{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}
