// The Helm chart's catalog of services (charts/worklane/templates/lib/_catalog.tpl), rendered from
// the service table and from what each service's own configuration reads, so the chart's
// Deployments, Services, environment, keys and NetworkPolicies follow the code. Helm cannot read
// TypeScript: `npm run generate -w @worklane/testing` writes the file and
// service-table.test.ts fails when it is stale.
import { PRINCIPALS, SERVICES, type ServiceInfo } from '@worklane/config';

import { configOf } from './service-config';

export const CHART_CATALOG = 'charts/worklane/templates/lib/_catalog.tpl';

/** The services that some other service or the ingress reaches over HTTP: their HTTP port serves an API. */
const servesHttpApi = (service: ServiceInfo) => service.public || SERVICES.some((caller) => caller.calls.http.includes(service.name));

/** One service's catalog entry, as YAML lines (flags only when true, lists only when not empty). */
function entryLines(service: ServiceInfo): string[] {
  const config = configOf(service.name);
  const reads = (variable: string) => variable in config;
  const trusts = PRINCIPALS.filter((principal) => reads(`${principal.toUpperCase()}_PUBLIC_KEY`));
  const fields: [string, string | number | boolean | readonly string[] | null][] = [
    ['http', service.httpPort],
    ['grpc', service.grpcPort],
    ['grpcAddrEnv', service.grpcAddrEnv],
    ['grpcProbes', service.grpcPort !== null && !servesHttpApi(service)],
    ['database', service.schema !== null],
    ['schema', service.schema],
    ['nats', service.nats],
    ['public', service.public],
    ['callsHttp', service.calls.http],
    ['callsGrpc', service.calls.grpc],
    ['signs', reads('SIGNING_PRIVATE_KEY')],
    ['trusts', trusts],
    ['webhookKeys', reads('WEBHOOK_SECRET_KEY')],
    ['allowedCidrs', reads('WEBHOOK_ALLOWED_CIDRS')],
    ['lists', reads('LIST_DEFAULT_LIMIT')],
    ['retryAfter', reads('UNAVAILABLE_RETRY_AFTER_SECONDS')],
    ['idempotency', reads('IDEMPOTENCY_KEY_TTL_HOURS')],
  ];
  const lines = [`${service.name}:`];
  for (const [key, value] of fields) {
    if (value === null || value === false || (Array.isArray(value) && value.length === 0)) continue;
    lines.push(`  ${key}: ${Array.isArray(value) ? `[${value.join(', ')}]` : String(value)}`);
  }
  return lines;
}

/** The whole text of _catalog.tpl. */
export function renderChartCatalog(): string {
  return [
    '{{/*',
    "GENERATED from the service table (packages/config/src/service-table.ts) and the services' own",
    'configuration schemas by `npm run generate -w @worklane/testing`; do not edit',
    '(packages/testing/src/service-table.test.ts fails when this file is stale).',
    '',
    'The services as the code defines them: ports, probes, what each one stores and which other',
    'services it calls. Deployments, Services, environment and NetworkPolicies are all derived from',
    'it (templates/lib/_services.tpl reads it), so a service or a call added to the table is wired',
    'and allowed in one place.',
    '',
    '  http / grpc      container ports (HTTP serves /healthz and /readyz; /metrics is on the',
    '                   `metrics` port, .Values.metrics.port, in every service)',
    "  grpcAddrEnv      variable through which clients find this service's gRPC port",
    '  grpcProbes       its HTTP port serves probes only (its API is gRPC): readiness uses the',
    '                   native gRPC health probe on the gRPC port',
    '  database, schema uses PostgreSQL (its own schema, migrated by a Job) / NATS JetStream: nats',
    '  public           reached by the ingress controller',
    '  callsHttp        services it calls over HTTP (<NAME>_SERVICE_URL)',
    '  callsGrpc        services it calls over gRPC (their grpcAddrEnv)',
    '  signs            reads SIGNING_PRIVATE_KEY: it mints caller identities (gateway, console) or',
    '                   signs its gRPC calls (issue, delivery) with its own Ed25519 key',
    '  trusts           the principals whose public keys it reads (<PRINCIPAL>_PUBLIC_KEY): the',
    '                   identity issuers of its API and the callers of its gRPC methods',
    '  webhookKeys      reads WEBHOOK_SECRET_KEY (webhook secrets encrypted at rest)',
    '  allowedCidrs     reads WEBHOOK_ALLOWED_CIDRS (private receiver ranges let through)',
    '  lists            serves API lists: reads the page-size and API-input settings',
    '  retryAfter       answers requests: reads UNAVAILABLE_RETRY_AFTER_SECONDS (its 503s)',
    '  idempotency      answers POSTs with an Idempotency-Key: reads the IDEMPOTENCY_* settings',
    '*/}}',
    '{{- define "worklane.catalog" -}}',
    ...SERVICES.flatMap(entryLines),
    '{{- end -}}',
    '',
    "{{/* The services in the table's order, as a YAML list. */}}",
    '{{- define "worklane.serviceNames" -}}',
    `[${SERVICES.map((service) => service.name).join(', ')}]`,
    '{{- end -}}',
    '',
    '{{/* The principals that sign internal calls, each with its own Ed25519 key pair (@worklane/config PRINCIPALS). */}}',
    '{{- define "worklane.signingPrincipals" -}}',
    `[${PRINCIPALS.join(', ')}]`,
    '{{- end -}}',
    '',
  ].join('\n');
}
