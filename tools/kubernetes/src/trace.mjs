// Phase (j): one trace through the whole system, found in an OTLP receiver inside the cluster.
//
// The OpenTelemetry Collector (src/collector.mjs) runs in its own namespace; `helm upgrade` points
// the release's traces at it through the chart's own values (otel.exporterOtlpEndpoint, and
// otel.resourceAttributes set to values this phase recognises). Then, from inside the cluster's
// network namespace, one API call through the gateway's Service creates an issue for a team with a
// webhook to the test receiver, with a token never used before (so the gateway cannot answer its
// check from its cache and asks the token service). Once the receiver has the issue.created POST,
// the suite looks in the collector's output for the trace of that API call and checks:
//   - its spans come from the gateway, token, issue and delivery services (service.name);
//   - it reaches the delivery service's outbound POST to the receiver, and every parent link from
//     that POST leads back, span by span, to the gateway's server span of the call, its root;
//   - the receiver got the POST with that trace in its traceparent header;
//   - every span of the trace carries the chart's resource attributes (release, image tag,
//     namespace, Deployment, pod, node) and the ones given in otel.resourceAttributes.
// The release keeps exporting to the collector after this phase (it is the last one).

import { say } from '../../dev/src/util.mjs';
import { NODE_NAME } from './cluster.mjs';
import { COLLECTOR_ENDPOINT, COLLECTOR_NAMESPACE, importCollectorImage, startCollector } from './collector.mjs';
import { waitUntil } from './commands.mjs';
import { describeReleaseForSuite } from './conformance.mjs';
import { RECEIVER_HOST, RECEIVER_PORT } from './receiver.mjs';
import { RELEASE, RELEASE_NAMESPACE, bootstrapTeam, upgradeRelease, waitForReleaseReady, worklaneCli } from './release.mjs';

/** OTLP span kinds, as the collector writes them. */
const SERVER = 2;
const CLIENT = 3;
/** The services the API call's trace must have spans of. */
export const TRACED_SERVICES = ['gateway', 'token', 'issue', 'delivery'];
/** How long the receiver and then the collector are given (spans leave each service in batches, every few seconds). */
const EVENT_TIMEOUT_MS = 90_000;
const SPANS_TIMEOUT_MS = 90_000;

/** The chart values of this phase, on top of the environment's: traces to the collector, recognisable resource attributes. */
export function traceValues(runId) {
  return {
    otel: {
      exporterOtlpEndpoint: COLLECTOR_ENDPOINT,
      resourceAttributes: { 'deployment.environment.name': 'kubernetes-suite', 'worklane.suite.run': runId },
    },
    // The services' way out to OTLP narrowed to the collector's namespace, as docs/kubernetes.md advises.
    networkPolicy: { otlp: { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': COLLECTOR_NAMESPACE } } }] } },
  };
}

/**
 * Run inside the namespace: the project and the webhook to the receiver (set-up, retried while the
 * release settles, with the bootstrap token), then the one API call that creates the issue, with
 * the fresh token, never retried. Prints {projectId, webhookId, issuesPath, status, issueId, body}.
 */
const CLIENT_SCRIPT = `
const [gatewayUrl, teamId, organizationId, setUpToken, callToken, receiverUrl] = process.argv.slice(1);
const base = gatewayUrl + '/api/v1/teams/' + teamId;
const call = async (token, method, path, body) => {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: 'Bearer ' + token, accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  });
  const text = await response.text();
  return { status: response.status, text };
};
const setUp = async (path, body) => {
  let last = '';
  for (let attempt = 1; attempt <= 30; attempt += 1) {
    try {
      const answer = await call(setUpToken, 'POST', path, body);
      if (answer.status === 201) return JSON.parse(answer.text);
      last = answer.status + ' ' + answer.text.slice(0, 300);
    } catch (error) {
      last = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error('POST ' + path + ': ' + last);
};
(async () => {
  const project = await setUp('/organizations/' + organizationId + '/projects', { name: 'Traced' });
  const webhook = await setUp('/webhooks', { url: receiverUrl, events: ['issue.created'], secret: 'trace-phase-signing-secret' });
  const issuesPath = '/api/v1/teams/' + teamId + '/organizations/' + organizationId + '/projects/' + project.id + '/issues';
  const answer = await call(callToken, 'POST', '/organizations/' + organizationId + '/projects/' + project.id + '/issues', { title: 'One trace' });
  let issueId = null;
  try { issueId = JSON.parse(answer.text).id; } catch {}
  console.log(JSON.stringify({ projectId: project.id, webhookId: webhook.id, issuesPath, status: answer.status, issueId, body: answer.text.slice(0, 500) }));
})().catch((error) => { console.error(error.message); process.exit(1); });
`;

const method = (span) => span.attributes['http.request.method'] ?? span.attributes['http.method'];
const urlPath = (span) => span.attributes['url.path'] ?? span.attributes['http.target'];
const fullUrl = (span) => span.attributes['url.full'] ?? span.attributes['http.url'] ?? '';
const pathOf = (span) => {
  try {
    return new URL(fullUrl(span)).pathname;
  } catch {
    return urlPath(span);
  }
};

/**
 * The API call's trace in `spans`: {root, spans, post, chain, broken} where root is the gateway's
 * server span of the call, post the delivery's outbound POST to receiverUrl in the same trace,
 * chain the spans from post up to its first span without a known parent, broken the parent id
 * that could not be found (null when the chain ends at a span without parent).
 */
export function findCallTrace(spans, { issuesPath, receiverUrl }) {
  const roots = spans.filter((s) => s.service === 'gateway' && s.kind === SERVER && method(s) === 'POST' && urlPath(s) === issuesPath);
  if (roots.length !== 1) return { roots };
  const [root] = roots;
  const inTrace = spans.filter((s) => s.traceId === root.traceId);
  // By path: the delivery service may connect to the address it checked rather than by name.
  const receiverPath = new URL(receiverUrl).pathname;
  const post = inTrace.find((s) => s.service === 'delivery' && s.kind === CLIENT && method(s) === 'POST' && pathOf(s) === receiverPath) ?? null;
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const chain = [];
  let broken = null;
  for (let span = post; span && chain.length < 100;) {
    chain.push(span);
    if (!span.parentSpanId) break;
    const parent = byId.get(span.parentSpanId);
    if (!parent) broken = span.parentSpanId;
    span = parent;
  }
  return { roots, root, spans: inTrace, post, chain, broken };
}

const describeSpan = (s) => `${s.service}: ${s.name}`;

export async function runTrace(suite, cluster, { receiver, workDir, buildah, collector, images, environment }) {
  if (!collector) throw new Error('the OpenTelemetry Collector was not provisioned (the run did not select phase j when it started)');
  const log = (line) => say(`  ${line}`);
  const runId = `run-${process.pid}`;
  const image = await importCollectorImage(cluster, { buildah, collector, workDir, log });
  const otel = await startCollector(cluster, { image, readerImage: images.images.gateway });

  let upgraded = false;
  await suite.check(`helm upgrade points the release's traces at the in-cluster collector (${COLLECTOR_ENDPOINT}); every pod Ready`, async () => {
    await upgradeRelease(cluster, { values: [environment, traceValues(runId)], name: 'trace' });
    await waitForReleaseReady(cluster);
    upgraded = true;
  });
  if (!upgraded) return;

  const release = await describeReleaseForSuite(cluster, { receiver });
  const team = await bootstrapTeam(cluster, release, { name: 'Trace', tokenName: 'set-up' });
  // A token no gateway replica has seen: its check goes to the token service, inside the call's trace.
  const fresh = await worklaneCli(cluster, release, ['token', 'create', '--team', String(team.team_id), '--email', team.email, '--name', 'traced-call']);
  const receiverPath = `/trace-${team.team_id}`;
  const receiverUrl = `https://${RECEIVER_HOST}:${RECEIVER_PORT}${receiverPath}`;
  const client = await cluster.inNamespace(process.execPath, [
    '-e',
    CLIENT_SCRIPT,
    release.gatewayUrl,
    String(team.team_id),
    String(team.organization_id),
    team.token,
    fresh.token,
    receiverUrl,
  ]);
  if (client.code !== 0) throw new Error(`the API client failed: ${client.stderr}${client.stdout}`);
  const call = JSON.parse(client.stdout.trim().split('\n').pop());

  let created = false;
  await suite.check('the API call creating the issue, through the gateway Service, answers 201', () => {
    if (call.status !== 201 || !call.issueId) throw new Error(`it answered ${call.status}: ${call.body}`);
    created = true;
  });
  if (!created) return;

  let delivered = null;
  await suite.check('the receiver gets the issue.created POST, with a traceparent header', async () => {
    await waitUntil(
      `the receiver has issue ${call.issueId}'s event`,
      async () => {
        const got = (await receiver.received()).filter((r) => r.path === receiverPath && r.headers['x-webhook-event'] === 'issue.created');
        delivered = got.find((r) => JSON.parse(r.body.toString('utf8')).issue?.id === call.issueId) ?? null;
        return delivered ? true : `${got.length} request(s) at ${receiverPath}`;
      },
      { timeoutMs: EVENT_TIMEOUT_MS, intervalMs: 1_000 },
    );
    if (!/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(delivered.headers.traceparent ?? '')) {
      throw new Error(`its traceparent header is ${JSON.stringify(delivered.headers.traceparent)}`);
    }
  });
  if (!delivered) return;

  // Spans leave each service in batches: wait until the trace is whole, then check it piece by piece.
  let trace = { roots: [] };
  let spanCount = 0;
  await waitUntil(
    'the collector has the API call trace, from its gateway span to the outbound POST',
    async () => {
      const spans = await otel.spans();
      spanCount = spans.length;
      trace = findCallTrace(spans, { issuesPath: call.issuesPath, receiverUrl });
      if (!trace.root) return `${trace.roots.length} gateway server span(s) of POST ${call.issuesPath} among ${spans.length} spans`;
      const services = new Set(trace.spans.map((s) => s.service));
      const missing = TRACED_SERVICES.filter((s) => !services.has(s));
      if (missing.length > 0 || !trace.post || trace.broken || trace.chain.at(-1) !== trace.root) {
        return `trace ${trace.root.traceId}: ${trace.spans.length} spans, no span of ${missing.join(', ') || '-'}, outbound POST ${trace.post ? 'found' : 'missing'}${trace.broken ? `, parent ${trace.broken} missing` : ''}`;
      }
      return true;
    },
    { timeoutMs: SPANS_TIMEOUT_MS, intervalMs: 2_000 },
  ).catch((error) => log(error.message));
  say(`  the collector wrote ${spanCount} spans; the API call's trace ${trace.root?.traceId ?? '(not found)'} has ${trace.spans?.length ?? 0}`);

  await suite.check(`the collector holds one trace of the API call, with spans from ${TRACED_SERVICES.join(', ')} (service.name)`, () => {
    if (!trace.root) throw new Error(`${trace.roots.length} gateway server spans of POST ${call.issuesPath} (expected 1)`);
    const services = new Set(trace.spans.map((s) => s.service));
    const missing = TRACED_SERVICES.filter((s) => !services.has(s));
    if (missing.length > 0) throw new Error(`no span of ${missing.join(', ')} in trace ${trace.root.traceId}: ${trace.spans.map(describeSpan).join('; ')}`);
    if (trace.root.parentSpanId) throw new Error(`the gateway's server span has a parent (${trace.root.parentSpanId}): the call did not start the trace`);
  });

  await suite.check("it reaches the delivery's outbound POST to the receiver, every parent link leading back to the gateway's span of the call", () => {
    if (!trace.root) throw new Error('no trace');
    if (!trace.post) throw new Error(`no delivery POST to ${receiverUrl} in trace ${trace.root.traceId}: ${trace.spans.map(describeSpan).join('; ')}`);
    if (trace.broken) throw new Error(`the chain from the POST breaks at a parent span that was never exported (${trace.broken}): ${trace.chain.map(describeSpan).join(' <- ')}`);
    if (trace.chain.at(-1) !== trace.root) throw new Error(`the chain from the POST ends at ${describeSpan(trace.chain.at(-1))}, not at the gateway's span`);
    say(`  POST -> root: ${trace.chain.map(describeSpan).join(' <- ')}`);
    const [, traceId, parentId] = delivered.headers.traceparent.split('-');
    if (traceId !== trace.root.traceId || parentId !== trace.post.spanId) {
      throw new Error(`the receiver's traceparent ${delivered.headers.traceparent} names another span than the POST's (${trace.root.traceId}/${trace.post.spanId})`);
    }
  });

  await suite.check("every span of the trace carries the chart's resource attributes and otel.resourceAttributes", async () => {
    if (!trace.root) throw new Error('no trace');
    const { stdout } = await cluster.kubectl(['get', 'deployments', '-n', RELEASE_NAMESPACE, '-o', 'json']);
    const deployments = Object.fromEntries(JSON.parse(stdout).items.map((d) => [d.metadata.labels?.['app.kubernetes.io/component'], d.metadata.name]));
    const given = traceValues(runId).otel.resourceAttributes;
    const wrong = [];
    for (const span of trace.spans) {
      const expected = {
        'service.namespace': RELEASE,
        'service.version': environment.image.tag,
        'k8s.namespace.name': RELEASE_NAMESPACE,
        'k8s.deployment.name': deployments[span.service],
        'k8s.node.name': NODE_NAME,
        ...given,
      };
      for (const [key, value] of Object.entries(expected)) {
        if (span.resource[key] !== value) wrong.push(`${describeSpan(span)}: ${key}=${JSON.stringify(span.resource[key])}, expected ${JSON.stringify(value)}`);
      }
      const pod = span.resource['k8s.pod.name'];
      if (typeof pod !== 'string' || !pod.startsWith(`${deployments[span.service]}-`)) wrong.push(`${describeSpan(span)}: k8s.pod.name=${JSON.stringify(pod)}`);
    }
    if (wrong.length > 0) throw new Error(`${wrong.length} wrong: ${wrong.slice(0, 10).join('; ')}`);
  });
}
