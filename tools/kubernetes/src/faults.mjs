// Phase (h): faults under load. While src/load-generator.mjs sends API requests at a steady rate
// (half of them creating issues, each an issue.created event for a webhook to the cluster's HTTPS
// receiver), the suite, one fault after the other, each time waiting until everything is back:
//   1. deletes one pod of every Deployment of the release at once (each service keeps its other
//      replica; the Deployments make new pods);
//   2. deletes the pod of one of the three NATS servers: its StatefulSet makes it again under the
//      same name, on the same JetStream store (its volume kept), and the suite waits until the pod
//      is Ready, every server reports JetStream current and every stream has its three replicas
//      current again;
//   3. deletes the PostgreSQL pod (fast shutdown, the image's stop signal): the StatefulSet makes
//      it again on the same data volume, and the suite waits until it is Ready, every pod of the
//      release is Ready and the API answers reads of the load's issues again.
// Then it stops the load and checks that every issue whose creation was answered 201 reached the
// receiver as an issue.created event (at least once): 0 events lost. For each fault it prints how
// many requests failed and how long after the fault the API answered every request again.
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot, say } from '../../dev/src/util.mjs';
import { waitUntil } from './commands.mjs';
import { describeReleaseForSuite } from './conformance.mjs';
import { NATS_PODS, POSTGRES_POD, STREAMS, deleteDataPod, natsHealthy, streamReplicated, waitForDataPodBack } from './data-services.mjs';
import { RECEIVER_HOST, RECEIVER_PORT } from './receiver.mjs';
import { RELEASE, RELEASE_NAMESPACE, bootstrapTeam, waitForReleaseReady } from './release.mjs';

/** The load: requests per second (half create issues), at most this many in flight, each given this long. */
const LOAD = { ratePerSecond: 6, maxInFlight: 60, requestTimeoutMs: 20_000 };
/** How long the receiver is given, after the load stops, to have every event (deliveries are retried 0 s and 5 s after a failure, then minutes later). */
const EVENTS_TIMEOUT_MS = 8 * 60_000;

/** Failed requests of the window [from, to) and when the API answered everything again (ms after `from`; 0 when nothing failed). */
export function windowFigures(requests, from, to) {
  const inWindow = requests.filter((r) => r.kind !== 'skipped' && r.at >= from && r.at < to);
  const failed = inWindow.filter((r) => !(r.status >= 200 && r.status < 300));
  const lastFailure = failed.reduce((latest, r) => Math.max(latest, r.at + r.ms), from);
  return { total: inWindow.length, failed: failed.length, recoveredMs: failed.length === 0 ? 0 : lastFailure - from, samples: failed.slice(0, 3) };
}

/** Deliveries of issue.created seen by the receiver, by issue id: {issueId: count}. */
export async function deliveredIssues(receiver, receiverPath) {
  const seen = new Map();
  for (const request of await receiver.received()) {
    if (request.path !== receiverPath || request.headers['x-webhook-event'] !== 'issue.created') continue;
    const issueId = JSON.parse(request.body.toString('utf8')).issue?.id;
    seen.set(issueId, (seen.get(issueId) ?? 0) + 1);
  }
  return seen;
}

/** One GET through the gateway, run inside the namespace (the token in its environment, not its arguments): prints the status (0 when no answer came). */
const API_GET = `
const [url] = process.argv.slice(1);
fetch(url, { headers: { authorization: 'Bearer ' + process.env.WORKLANE_TEST_TOKEN }, signal: AbortSignal.timeout(5000) })
  .then((r) => console.log(r.status), () => console.log(0));
`;

/**
 * Waits until the API answers reads of the load's issues again, `times` in a row: after the
 * database came back, the services' connection pools still hold connections it closed, and the
 * pods' readiness probes may not have noticed yet.
 */
async function waitForApiAnswers(cluster, { url, token, times = 3 }) {
  let inRow = 0;
  await waitUntil(
    `the API answers ${times} reads in a row`,
    async () => {
      const { stdout } = await cluster.inNamespace(process.execPath, ['-e', API_GET, url], { env: { ...process.env, WORKLANE_TEST_TOKEN: token } });
      const status = Number(stdout.trim());
      inRow = status === 200 ? inRow + 1 : 0;
      return inRow >= times || `${inRow} in a row, last answer ${status}`;
    },
    { timeoutMs: 180_000, intervalMs: 200 },
  );
}

export async function runFaults(suite, cluster, { receiver, workDir }) {
  const release = await describeReleaseForSuite(cluster, { receiver });
  const team = await bootstrapTeam(cluster, release, { name: 'Faults', tokenName: 'load' });
  const receiverPath = `/faults-${team.team_id}`;
  const readyFile = path.join(workDir, 'load-ready.json');
  const resultFile = path.join(workDir, 'load-result.json');
  const configFile = path.join(workDir, 'load-config.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      gatewayUrl: release.gatewayUrl,
      token: team.token,
      teamId: team.team_id,
      receiverUrl: `https://${RECEIVER_HOST}:${RECEIVER_PORT}${receiverPath}`,
      readyFile,
      resultFile,
      ...LOAD,
    }),
    { mode: 0o600 },
  );
  cluster.startDaemon('load-generator', process.execPath, [path.join(repoRoot, 'tools', 'kubernetes', 'src', 'load-generator.mjs'), configFile]);
  await waitUntil(
    'the load generator has its project and webhook',
    () => {
      if (!cluster.processes.alive('load-generator')) throw new Error(`the load generator exited:\n${cluster.processes.tail('load-generator')}`);
      return fs.existsSync(readyFile) || 'not yet';
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );

  const windows = [];
  const fault = async (name, inject, settled) => {
    const from = Date.now();
    await inject();
    await settled();
    windows.push({ name, from, to: Date.now() });
    say(`  ${name}: back in ${((Date.now() - from) / 1000).toFixed(1)} s`);
  };
  // A quiet stretch first: the load's own baseline.
  const quietFrom = Date.now();
  await waitUntil('ten seconds of load before the faults', () => Date.now() - quietFrom >= 10_000 || 'not yet', { timeoutMs: 30_000, intervalMs: 500 });
  windows.push({ name: 'before the faults', from: quietFrom, to: Date.now() });

  await fault(
    'one pod of every Deployment deleted',
    async () => {
      const { stdout } = await cluster.kubectl(['get', 'pods', '-n', RELEASE_NAMESPACE, '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'json']);
      const pods = JSON.parse(stdout).items.filter((p) => (p.metadata.ownerReferences ?? []).some((o) => o.kind === 'ReplicaSet'));
      const victims = new Map();
      for (const pod of pods) {
        const component = pod.metadata.labels['app.kubernetes.io/component'];
        if (!victims.has(component)) victims.set(component, pod.metadata.name);
      }
      say(`  deleting ${[...victims.values()].join(', ')}`);
      const deleted = await cluster.kubectl(['delete', 'pod', '-n', RELEASE_NAMESPACE, '--wait=false', ...victims.values()]);
      if (deleted.code !== 0) throw new Error(`kubectl delete pod: ${deleted.stderr}`);
    },
    () => waitForReleaseReady(cluster),
  );
  const nats = NATS_PODS[1];
  let natsBefore = null;
  await fault(
    `NATS server pod ${nats} deleted (its store kept)`,
    async () => {
      natsBefore = await deleteDataPod(cluster, nats);
    },
    async () => {
      await waitForDataPodBack(cluster, nats, natsBefore);
      await waitUntil('every NATS server reports JetStream healthy', () => natsHealthy(cluster), { timeoutMs: 180_000, intervalMs: 500 });
      for (const stream of STREAMS) {
        await waitUntil(`${stream} has its three replicas current`, () => streamReplicated(cluster, stream), { timeoutMs: 180_000, intervalMs: 500 });
      }
    },
  );
  let postgresBefore = null;
  await fault(
    `PostgreSQL pod ${POSTGRES_POD} deleted (its volume kept)`,
    async () => {
      postgresBefore = await deleteDataPod(cluster, POSTGRES_POD);
    },
    async () => {
      await waitForDataPodBack(cluster, POSTGRES_POD, postgresBefore);
      await waitForReleaseReady(cluster);
      const load = JSON.parse(fs.readFileSync(readyFile, 'utf8'));
      const issuesUrl = `${release.gatewayUrl}/api/v1/teams/${team.team_id}/organizations/${load.organizationId}/projects/${load.projectId}/issues?limit=1`;
      await waitForApiAnswers(cluster, { url: issuesUrl, token: team.token });
    },
  );
  // A quiet stretch after: requests made once everything is back.
  const afterFrom = Date.now();
  await waitUntil('ten seconds of load after the faults', () => Date.now() - afterFrom >= 10_000 || 'not yet', { timeoutMs: 30_000, intervalMs: 500 });
  windows.push({ name: 'after the faults', from: afterFrom, to: Date.now() });

  await cluster.processes.stopWith('load-generator', 'SIGTERM', 60_000);
  if (!fs.existsSync(resultFile)) throw new Error(`the load generator wrote no result:\n${cluster.processes.tail('load-generator')}`);
  const { requests } = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  const created = requests.filter((r) => r.kind === 'create' && r.status === 201 && r.issueId !== undefined).map((r) => r.issueId);
  const skipped = requests.filter((r) => r.kind === 'skipped').length;
  say(`  load: ${requests.length} requests at ${LOAD.ratePerSecond}/s, ${created.length} issues created, ${skipped} not sent (more than ${LOAD.maxInFlight} in flight)`);
  for (const window of windows) {
    const figures = windowFigures(requests, window.from, window.to);
    const samples = figures.samples.map((r) => `${r.kind} ${r.status} ${r.error ?? ''}`.trim()).join('; ');
    say(
      `  ${window.name}: ${figures.failed} of ${figures.total} requests failed; the API answered every request again ${(figures.recoveredMs / 1000).toFixed(1)} s after it began${samples ? ` (${samples})` : ''}`,
    );
  }

  await suite.check('(h) the API answers every request once the faults are over', () => {
    const after = windowFigures(requests, afterFrom, afterFrom + 10_000);
    if (after.failed > 0) throw new Error(`${after.failed} of ${after.total} requests failed after the faults: ${JSON.stringify(after.samples)}`);
    if (after.total === 0) throw new Error('no request was made after the faults');
  });
  await suite.check(`(h) every issue created under the faults reached the receiver as issue.created: 0 events lost`, async () => {
    if (created.length === 0) throw new Error('no issue was created');
    let missing = created;
    let seen = new Map();
    await waitUntil(
      `the receiver has the issue.created event of each of the ${created.length} issues`,
      async () => {
        seen = await deliveredIssues(receiver, receiverPath);
        missing = created.filter((id) => !seen.has(id));
        return missing.length === 0 || `${missing.length} missing, e.g. issues ${missing.slice(0, 10).join(', ')}`;
      },
      { timeoutMs: EVENTS_TIMEOUT_MS, intervalMs: 2_000 },
    );
    const duplicates = [...seen.values()].filter((count) => count > 1).length;
    say(`  ${created.length} events, all received; ${duplicates} received more than once (at least once is the promise)`);
  });
  await suite.check('(h) every pod of the release is Ready after the faults', async () => {
    await waitForReleaseReady(cluster);
  });
}
