// The trace phase's OTLP receiver: the OpenTelemetry Collector built by
// provision/otel-collector.mjs, as an image holding that one static binary, run in its own
// namespace of the test cluster as a pod with a Service. The release's services export to it over
// OTLP/HTTP (the chart's otel.exporterOtlpEndpoint); it writes every batch it receives, one
// OTLP/JSON line each, to a file on an emptyDir volume. A second container of the pod, from one of
// the service images, only holds that volume (read-only) so the suite can read the file with
// `kubectl exec ... cat`: the collector's image has no program but the collector.
import fs from 'node:fs';
import path from 'node:path';

import { run } from '../../dev/src/util.mjs';
import { retrySetUp, runLoggedChecked, waitUntil } from './commands.mjs';
import { exportImage } from './images.mjs';

export const COLLECTOR_NAMESPACE = 'worklane-otel';
export const COLLECTOR_NAME = 'otel-collector';
export const COLLECTOR_HTTP_PORT = 4318;
export const COLLECTOR_GRPC_PORT = 4317;
/** What the release is given as otel.exporterOtlpEndpoint: the Service's name, resolved by the cluster DNS. */
export const COLLECTOR_ENDPOINT = `http://${COLLECTOR_NAME}.${COLLECTOR_NAMESPACE}.svc.cluster.local:${COLLECTOR_HTTP_PORT}`;
const SPANS_DIR = '/spans';
const SPANS_FILE = `${SPANS_DIR}/spans.jsonl`;

/** The image's name: the collector's version and the digest of what it was built from. */
export const collectorImageName = (collector) => `localhost/worklane-test/otel-collector:${collector.version}-${collector.digest}`;

/** The collector's configuration: OTLP in (HTTP and gRPC), every span to the file; no telemetry of its own. */
export const COLLECTOR_CONFIG = `receivers:
  otlp:
    protocols:
      http:
        endpoint: 0.0.0.0:${COLLECTOR_HTTP_PORT}
      grpc:
        endpoint: 0.0.0.0:${COLLECTOR_GRPC_PORT}
exporters:
  file:
    path: ${SPANS_FILE}
    flush_interval: 200ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`;

/**
 * Makes the collector's image with buildah (an image of the one binary, unless it exists) and
 * imports it into the cluster's containerd, unless it is there. Set-up: a failed export or import
 * is tried again.
 */
export async function importCollectorImage(cluster, { buildah, collector, workDir, log }) {
  const name = collectorImageName(collector);
  const { stdout } = await cluster.ctr(['images', 'ls', '-q']);
  if (stdout.split('\n').includes(name)) return name;
  const logFile = path.join(workDir, 'collector-image.log');
  const options = { log: logFile, env: buildah.env };
  const exists = await run(buildah.bin, ['inspect', '--type', 'image', name], { env: buildah.env });
  if (exists.code !== 0) {
    const from = await run(buildah.bin, ['from', `--signature-policy=${buildah.signaturePolicy}`, 'scratch'], { env: buildah.env });
    if (from.code !== 0) throw new Error(`buildah from scratch failed: ${from.stderr}`);
    const container = from.stdout.trim();
    try {
      await runLoggedChecked(buildah.bin, ['copy', '--chmod=0755', container, collector.bin, '/otelcol'], options);
      await runLoggedChecked(buildah.bin, ['config', '--entrypoint=["/otelcol"]', '--cmd=', container], options);
      await runLoggedChecked(buildah.bin, ['commit', `--signature-policy=${buildah.signaturePolicy}`, container, name], options);
    } finally {
      await run(buildah.bin, ['rm', container], { env: buildah.env });
    }
    // Images of an earlier collector build go: only this one is ever used.
    const { stdout: names } = await run(buildah.bin, ['images', '--format', '{{.Name}}:{{.Tag}}'], { env: buildah.env });
    const repository = name.slice(0, name.lastIndexOf(':') + 1);
    const stale = names.split('\n').filter((n) => n.startsWith(repository) && n !== name);
    if (stale.length > 0) await run(buildah.bin, ['rmi', ...stale], { env: buildah.env });
  }
  const tar = path.join(workDir, 'otel-collector-image.tar');
  await retrySetUp(
    `importing ${name}`,
    async () => {
      try {
        await exportImage(buildah, name, tar, logFile);
        const imported = await cluster.ctr(['images', 'import', tar]);
        if (imported.code !== 0) throw new Error(`ctr images import ${name} failed: ${imported.stderr}`);
      } finally {
        fs.rmSync(tar, { force: true });
      }
    },
    { say: log },
  );
  return name;
}

/** The collector's objects: namespace, configuration, the pod (collector and the file's reader) and its Service. */
export function collectorManifest({ image, readerImage }) {
  const labels = { 'app.kubernetes.io/name': COLLECTOR_NAME };
  const restricted = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: COLLECTOR_NAMESPACE } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: COLLECTOR_NAME, namespace: COLLECTOR_NAMESPACE }, data: { 'config.yaml': COLLECTOR_CONFIG } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: COLLECTOR_NAME, namespace: COLLECTOR_NAMESPACE, labels },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 5,
        securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'collector',
            image,
            imagePullPolicy: 'Never',
            args: ['--config=file:/etc/otelcol/config.yaml'],
            ports: [
              { name: 'otlp-http', containerPort: COLLECTOR_HTTP_PORT },
              { name: 'otlp-grpc', containerPort: COLLECTOR_GRPC_PORT },
            ],
            readinessProbe: { tcpSocket: { port: COLLECTOR_HTTP_PORT }, periodSeconds: 2 },
            volumeMounts: [
              { name: 'config', mountPath: '/etc/otelcol', readOnly: true },
              { name: 'spans', mountPath: SPANS_DIR },
            ],
            securityContext: restricted,
            resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '512Mi' } },
          },
          {
            name: 'reader',
            image: readerImage,
            imagePullPolicy: 'Never',
            // Nothing to do but exist: the suite runs `cat` in it.
            command: ['node', '-e', 'setInterval(() => {}, 3_600_000)'],
            volumeMounts: [{ name: 'spans', mountPath: SPANS_DIR, readOnly: true }],
            securityContext: restricted,
            resources: { requests: { cpu: '5m', memory: '32Mi' }, limits: { memory: '128Mi' } },
          },
        ],
        volumes: [
          { name: 'config', configMap: { name: COLLECTOR_NAME } },
          { name: 'spans', emptyDir: { sizeLimit: '256Mi' } },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: COLLECTOR_NAME, namespace: COLLECTOR_NAMESPACE },
      spec: {
        selector: labels,
        ports: [
          { name: 'otlp-http', port: COLLECTOR_HTTP_PORT, targetPort: COLLECTOR_HTTP_PORT },
          { name: 'otlp-grpc', port: COLLECTOR_GRPC_PORT, targetPort: COLLECTOR_GRPC_PORT },
        ],
      },
    },
  ];
  return { apiVersion: 'v1', kind: 'List', items: objects };
}

/** Creates the collector; resolves once its pod is Ready and its Service has the pod as endpoint. */
export async function startCollector(cluster, { image, readerImage }) {
  const applied = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(collectorManifest({ image, readerImage })) });
  if (applied.code !== 0) throw new Error(`could not create the OpenTelemetry Collector: ${applied.stderr}`);
  await waitUntil(
    'the OpenTelemetry Collector pod is Ready',
    async () => {
      const { stdout } = await cluster.kubectl([
        'get',
        'pod',
        '-n',
        COLLECTOR_NAMESPACE,
        COLLECTOR_NAME,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.phase}',
      ]);
      const [ready, phase] = stdout.trim().split(' ');
      if (phase === 'Failed') {
        const logs = await cluster.kubectl(['logs', '-n', COLLECTOR_NAMESPACE, COLLECTOR_NAME, '-c', 'collector']);
        throw new Error(`the collector pod failed: ${logs.stdout}${logs.stderr}`);
      }
      return ready === 'True' ? true : `${phase ?? 'no phase'} ${ready ?? ''}`;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  return new Collector(cluster);
}

/** The flattened attributes of an OTLP/JSON attribute list: {key: value}. */
export function attributesOf(list = []) {
  const value = (v = {}) => {
    if ('stringValue' in v) return v.stringValue;
    if ('intValue' in v) return Number(v.intValue);
    if ('doubleValue' in v) return v.doubleValue;
    if ('boolValue' in v) return v.boolValue;
    if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(value);
    return JSON.stringify(v);
  };
  return Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
}

/** Every span of the collector's output lines: [{traceId, spanId, parentSpanId, name, kind, attributes, resource, service}]. */
export function spansOf(text) {
  const spans = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const batch = JSON.parse(line);
    for (const resourceSpans of batch.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind ?? 0,
            scope: scopeSpans.scope?.name ?? '',
            attributes: attributesOf(span.attributes),
            resource,
            service: resource['service.name'] ?? '',
          });
        }
      }
    }
  }
  return spans;
}

/** What the suite reads of the collector. */
export class Collector {
  constructor(cluster) {
    this.cluster = cluster;
  }

  /** Every span the collector has written so far. */
  async spans() {
    const { code, stdout, stderr } = await this.cluster.kubectl(['exec', '-n', COLLECTOR_NAMESPACE, COLLECTOR_NAME, '-c', 'reader', '--', 'cat', SPANS_FILE]);
    if (code !== 0) {
      // Nothing exported yet: the file exporter creates the file with its first batch.
      if (/No such file/.test(stderr)) return [];
      throw new Error(`reading the collector's file failed: ${stderr}`);
    }
    return spansOf(stdout);
  }
}
