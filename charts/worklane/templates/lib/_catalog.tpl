{{/*
The services as the code defines them: ports, probes, what each one stores and which other
services it calls. Deployments, Services, environment and NetworkPolicies are all derived from
this one table, so a call added here is wired and allowed in one place.

  http / grpc      container ports (HTTP serves /healthz, /readyz and /metrics)
  grpcProbes       readiness and startup use the native gRPC health probe on the gRPC port
  grpcAddrEnv      variable through which clients find this service's gRPC port
  database, nats   uses PostgreSQL (own schema, migrations) / NATS JetStream
  public           reached by the ingress controller
  callsHttp        services it calls over HTTP (<NAME>_SERVICE_URL)
  callsGrpc        services it calls over gRPC (their grpcAddrEnv)
*/}}
{{- define "worklane.catalog" -}}
gateway:
  http: 8080
  public: true
  callsHttp: [project, webhook, issue, delivery, console]
  callsGrpc: [token]
token:
  http: 9101
  grpc: 7001
  grpcProbes: true
  grpcAddrEnv: TOKEN_SERVICE_ADDR
  database: true
project:
  http: 8081
  grpc: 7002
  grpcAddrEnv: PROJECT_GRPC_ADDR
  database: true
webhook:
  http: 8082
  grpc: 7003
  grpcAddrEnv: WEBHOOK_GRPC_ADDR
  database: true
  webhookKeys: true
  allowedCidrs: true
issue:
  http: 8083
  database: true
  nats: true
  callsGrpc: [project, token]
delivery:
  http: 8084
  database: true
  nats: true
  allowedCidrs: true
  callsGrpc: [webhook]
console:
  http: 8085
  public: true
  callsHttp: [project, webhook, issue, delivery]
  callsGrpc: [token]
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
