// The "Services and ports" table of docs/architecture.md, rendered from the service table so the
// docs cannot drift from what `npm start` and the tests run.
// `npm run generate -w @worklane/testing` (./generate.ts) rewrites it between the markers;
// service-table.test.ts fails when it is stale.
import { SERVICES, START_ORDER, type ServiceInfo } from '@worklane/config';

export const ARCHITECTURE_DOC = 'docs/architecture.md';
export const TABLE_START = '<!-- service-table:start (generated from packages/config/src/service-table.ts by `npm run generate -w @worklane/testing`) -->';
export const TABLE_END = '<!-- service-table:end -->';

const dash = (value: string | number | null | false) => (value === null || value === false || value === '' ? '-' : String(value));

function httpCell(service: ServiceInfo): string {
  if (service.name === 'gateway') return `${service.httpPort} (\`GATEWAY_PORT\` in dev)`;
  if (service.grpcPort !== null && !SERVICES.some((caller) => caller.calls.http.includes(service.name))) return `${service.httpPort} (probes only)`;
  return String(service.httpPort);
}

function dependsCell(service: ServiceInfo): string {
  return service.dependsOn.length === 0 ? '-' : service.dependsOn.join(', ');
}

/** The markdown between the markers. */
export function renderServiceTable(): string {
  const rows = [
    '| service | package | image | HTTP (API, /healthz, /readyz) | metrics (/metrics) | gRPC | schema | NATS | depends on |',
    '|---|---|---|---|---|---|---|---|---|',
    ...SERVICES.map((s) =>
      [s.name, `\`${s.package}\``, `\`${s.image}\``, httpCell(s), s.metricsPort, dash(s.grpcPort), dash(s.schema), s.nats ? 'yes' : '-', dependsCell(s)].join(' | '),
    ).map((row) => `| ${row} |`),
    '',
    `Start order (each service after those it calls): ${START_ORDER.join(', ')}.`,
  ];
  return rows.join('\n');
}

/** `text` (the doc) with the table between the markers replaced by the current one. */
export function updatedArchitectureDoc(text: string): string {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${ARCHITECTURE_DOC} lacks the markers ${TABLE_START} ... ${TABLE_END}`);
  return `${text.slice(0, start + TABLE_START.length)}\n${renderServiceTable()}\n${text.slice(end)}`;
}
