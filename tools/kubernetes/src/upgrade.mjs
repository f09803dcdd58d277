// Phase (g): a rolling upgrade under load, then a rollback under the same load.
//
// The release runs the images of phase (b). This phase makes a second tag of them whose only
// difference is one backwards-compatible ("expand") migration of the issue service: a nullable
// column and an index on it, which the code of either tag never reads or writes. The migration
// exists only in that tag's build context (written here, never a file of the repository); the
// six other services get the new tag on the very same images. While src/load-generator.mjs
// sends API requests at a steady rate (half of them creating issues, each an issue.created
// event for a webhook to the cluster's HTTPS receiver), the suite:
//   1. runs `helm upgrade` to the new tag with the release's own values, as an operator would:
//      the chart's pre-upgrade hook migrates in Jobs, then the Deployments roll;
//   2. runs `helm rollback` to the revision before it: the old pods come back on the migrated
//      schema (no migration is reverted, none runs).
// Meanwhile it samples the release's pods (and, until the migration shows, the issue service's
// schema, asked from inside one of its pods with the pod's own DATABASE_URL), which shows in
// causal order, without comparing clocks of different machines, that the migration was applied
// before any pod of the new tag existed and that the old issue pods alone served requests on
// the migrated schema before the first new one was Ready. It checks 0 failed API requests in
// both rollouts and that every issue answered 201 reached the receiver as issue.created.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot, run, say } from '../../dev/src/util.mjs';
import { retrySetUp, runLoggedChecked, waitUntil } from './commands.mjs';
import { describeReleaseForSuite } from './conformance.mjs';
import { deliveredIssues, windowFigures } from './faults.mjs';
import { exportImage, imageName } from './images.mjs';
import { RECEIVER_HOST, RECEIVER_PORT } from './receiver.mjs';
import { RELEASE, RELEASE_NAMESPACE, bootstrapTeam, describeRelease, upgradeRelease, waitForReleaseReady } from './release.mjs';

/** The load: requests per second (half create issues), at most this many in flight, each given this long. */
const LOAD = { ratePerSecond: 6, maxInFlight: 60, requestTimeoutMs: 20_000 };
/** Load alone before, between and after the two rollouts (their baselines). */
const QUIET_MS = 10_000;
/** How long the receiver is given, after the load stops, to have every event. */
const EVENTS_TIMEOUT_MS = 5 * 60_000;
/** How often the pods are sampled while a rollout goes on. */
const SAMPLE_INTERVAL_MS = 500;

/** The expand migration of the upgrade's tag: made for this test only. */
export const EXPAND_MIGRATION = {
  service: 'issue',
  file: '900_upgrade_check.sql',
  table: 'issues',
  column: 'upgrade_check',
  index: 'issues_by_upgrade_check',
};

function migrationSql({ table, column, index }) {
  return [
    '-- Written by the Kubernetes suite (tools/kubernetes/src/upgrade.mjs) into the build context of its',
    '-- upgrade image only. An expand step: a nullable column and an index on it, which the release',
    '-- before it neither reads nor writes, so its pods keep working on the migrated schema.',
    `ALTER TABLE ${table} ADD COLUMN ${column} text;`,
    `CREATE INDEX ${index} ON ${table} (${column});`,
    '',
  ].join('\n');
}

/**
 * The upgrade's images: the migrating service's image rebuilt FROM the current one with the
 * migration added (buildah, cached by its inputs), every other service's image tagged anew in
 * containerd. Resolves {tag, images: {service: name}}.
 */
export async function buildUpgradeImages({ cluster, buildah, images, workDir, log = say }) {
  const { service, file } = EXPAND_MIGRATION;
  const base = images.images[service];
  if (!base) throw new Error(`phase (b) built no ${service} image`);
  const sql = migrationSql(EXPAND_MIGRATION);
  const containerfile = [`FROM ${base}`, `COPY ${file} /app/services/${service}/migrations/${file}`, ''].join('\n');
  const tag = `${images.tag}-expand-${createHash('sha256').update(containerfile).update(sql).digest('hex').slice(0, 8)}`;
  const upgraded = Object.fromEntries(Object.keys(images.images).map((s) => [s, imageName(s, tag)]));
  const logFile = path.join(workDir, 'upgrade-images.log');

  const present = (await run(buildah.bin, ['inspect', '--type', 'image', upgraded[service]], { env: buildah.env })).code === 0;
  if (!present) {
    const context = path.join(workDir, 'upgrade-image-context');
    fs.mkdirSync(context, { recursive: true });
    fs.writeFileSync(path.join(context, 'Containerfile'), containerfile);
    fs.writeFileSync(path.join(context, file), sql);
    await runLoggedChecked(
      buildah.bin,
      [
        'bud',
        '--layers',
        '--pull-never',
        `--signature-policy=${buildah.signaturePolicy}`,
        '--file=Containerfile',
        `--tag=${upgraded[service]}`,
        `--label=org.opencontainers.image.version=${tag}`,
        '.',
      ],
      { log: logFile, env: buildah.env, cwd: context, timeoutMs: 10 * 60_000 },
    );
    fs.rmSync(context, { recursive: true, force: true });
  }
  // Into the cluster's containerd: the rebuilt image imported, the others tagged (same content).
  const tar = path.join(workDir, 'upgrade-image.tar');
  await retrySetUp(
    `importing ${upgraded[service]}`,
    async () => {
      try {
        await exportImage(buildah, upgraded[service], tar, logFile);
        const imported = await cluster.ctr(['images', 'import', tar]);
        if (imported.code !== 0) throw new Error(`ctr images import ${upgraded[service]} failed: ${imported.stderr}`);
      } finally {
        fs.rmSync(tar, { force: true });
      }
    },
    { say: log },
  );
  for (const [name, image] of Object.entries(upgraded)) {
    if (name === service) continue;
    const tagged = await cluster.ctr(['images', 'tag', '--force', images.images[name], image]);
    if (tagged.code !== 0) throw new Error(`ctr images tag ${images.images[name]} ${image} failed: ${tagged.stderr}`);
  }
  log(
    `upgrade images ${imageName('<service>', tag)}: ${service} ${present ? 'built before' : 'built'} with ${file}, the other ${Object.keys(upgraded).length - 1} tagged on their current images`,
  );
  return { tag, images: upgraded };
}

/** The release's pods as the samples keep them. */
function podSummary(pod) {
  const owner = (pod.metadata.ownerReferences ?? [])[0]?.kind ?? '';
  const image = pod.spec.containers[0]?.image ?? '';
  return {
    name: pod.metadata.name,
    component: pod.metadata.labels?.['app.kubernetes.io/component'] ?? '',
    service: pod.metadata.labels?.['worklane.dev/service'] ?? pod.metadata.labels?.['app.kubernetes.io/component'] ?? '',
    owner,
    tag: image.slice(image.lastIndexOf(':') + 1),
    phase: pod.status?.phase ?? '',
    ready: (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    deleting: Boolean(pod.metadata.deletionTimestamp),
  };
}

async function releasePods(cluster) {
  const { code, stdout, stderr } = await cluster.kubectl(['get', 'pods', '-n', RELEASE_NAMESPACE, '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'json']);
  if (code !== 0) throw new Error(`kubectl get pods: ${stderr}`);
  return JSON.parse(stdout).items.map(podSummary);
}

/** Run inside a pod of the migrating service, with its own DATABASE_URL and DATABASE_SCHEMA: what its schema holds. */
const SCHEMA_PROBE = `
const pg = require('pg');
const [file, table, column, index] = process.argv.slice(1);
const schema = process.env.DATABASE_SCHEMA;
(async () => {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const migrations = await client.query('SELECT version FROM ' + schema + '.schema_migrations ORDER BY version');
    const columns = await client.query('SELECT is_nullable, column_default FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = $3', [schema, table, column]);
    const indexes = await client.query('SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2', [schema, index]);
    process.stdout.write(JSON.stringify({
      migrations: migrations.rows.map((r) => r.version),
      applied: migrations.rows.some((r) => r.version === file),
      column: columns.rows[0] ?? null,
      index: indexes.rows[0]?.indexdef ?? null,
    }));
  } finally {
    await client.end();
  }
})().catch((error) => { console.error(error.message); process.exit(1); });
`;

/** The migrating service's schema, asked from inside `pod` (one of its Running pods). */
async function schemaState(cluster, pod) {
  const { file, table, column, index } = EXPAND_MIGRATION;
  const { code, stdout, stderr } = await cluster.kubectl(['exec', '-n', RELEASE_NAMESPACE, pod, '--', 'node', '-e', SCHEMA_PROBE, file, table, column, index]);
  if (code !== 0) throw new Error(`the schema probe in ${pod} failed: ${stderr || stdout}`);
  return JSON.parse(stdout);
}

/** A pod of the migrating service that can run the schema probe. */
function probePod(pods) {
  return pods.find((p) => p.component === EXPAND_MIGRATION.service && p.owner === 'ReplicaSet' && p.phase === 'Running' && p.ready && !p.deleting)?.name;
}

/**
 * Samples the release's pods (and, while `schema` is set and until the migration shows, the
 * schema) every SAMPLE_INTERVAL_MS until stop() is called; resolves the samples, each
 * {podsFrom, podsTo, pods, schemaFrom?, schemaTo?, applied?}: every time is the suite's clock
 * around the question, so "A answered before B was asked" is an order, not a clock comparison.
 */
function startSampler(cluster, { schema }) {
  const samples = [];
  const keepLogs = podLogKeeper(cluster);
  let stopped = false;
  let migrationSeen = false;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      const sample = { podsFrom: started };
      try {
        sample.pods = await releasePods(cluster);
        sample.podsTo = Date.now();
        if (schema && !migrationSeen) {
          const pod = probePod(sample.pods);
          if (pod) {
            sample.schemaFrom = Date.now();
            const state = await schemaState(cluster, pod);
            sample.schemaTo = Date.now();
            sample.applied = state.applied;
            migrationSeen = state.applied;
          }
        }
        samples.push(sample);
        keepLogs();
      } catch (error) {
        // A sample that could not be taken is left out (the pods it would have shown are in the next one).
        samples.push({ ...sample, error: error.message });
      }
      const wait = SAMPLE_INTERVAL_MS - (Date.now() - started);
      if (wait > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      keepLogs();
      return samples.filter((s) => s.pods);
    },
  };
}

/**
 * The kubelet removes a pod's log with the pod: keeps a copy of every release pod's log (under
 * upgrade-pod-logs/ in the run's directory) as it grows, so the logs of the pods a rollout
 * replaced are there when a check fails. Returns the function that copies what changed.
 */
function podLogKeeper(cluster) {
  const from = path.join(cluster.workDir, 'pod-logs');
  const to = path.join(cluster.workDir, 'upgrade-pod-logs');
  const sizes = new Map();
  return () => {
    if (!fs.existsSync(from)) return;
    for (const pod of fs.readdirSync(from).filter((d) => d.startsWith(`${RELEASE_NAMESPACE}_`))) {
      for (const container of fs.readdirSync(path.join(from, pod), { withFileTypes: true }).filter((d) => d.isDirectory())) {
        const dir = path.join(from, pod, container.name);
        for (const file of fs.readdirSync(dir)) {
          const source = path.join(dir, file);
          try {
            const { size } = fs.statSync(source);
            if (sizes.get(source) === size) continue;
            fs.mkdirSync(path.join(to, pod, container.name), { recursive: true });
            fs.copyFileSync(source, path.join(to, pod, container.name, file));
            sizes.set(source, size);
          } catch {
            // removed meanwhile: the last copy stays
          }
        }
      }
    }
  };
}

/** Starts src/load-generator.mjs in the cluster's namespace for `team`; resolves {stop(): requests} once its webhook exists. */
async function startLoad(cluster, { release, team, workDir, receiverPath }) {
  const file = (name) => path.join(workDir, `upgrade-load-${name}.json`);
  fs.writeFileSync(
    file('config'),
    JSON.stringify({
      gatewayUrl: release.gatewayUrl,
      token: team.token,
      teamId: team.team_id,
      receiverUrl: `https://${RECEIVER_HOST}:${RECEIVER_PORT}${receiverPath}`,
      readyFile: file('ready'),
      resultFile: file('result'),
      ...LOAD,
    }),
    { mode: 0o600 },
  );
  const name = 'upgrade-load-generator';
  cluster.startDaemon(name, process.execPath, [path.join(repoRoot, 'tools', 'kubernetes', 'src', 'load-generator.mjs'), file('config')]);
  await waitUntil(
    'the load generator has its project and webhook',
    () => {
      if (!cluster.processes.alive(name)) throw new Error(`the load generator exited:\n${cluster.processes.tail(name)}`);
      return fs.existsSync(file('ready')) || 'not yet';
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  return {
    stop: async () => {
      await cluster.processes.stopWith(name, 'SIGTERM', 60_000);
      if (!fs.existsSync(file('result'))) throw new Error(`the load generator wrote no result:\n${cluster.processes.tail(name)}`);
      return JSON.parse(fs.readFileSync(file('result'), 'utf8')).requests;
    },
  };
}

async function helmJson(cluster, args) {
  const { code, stdout, stderr } = await cluster.helm([...args, '--namespace', RELEASE_NAMESPACE, '-o', 'json']);
  if (code !== 0) throw new Error(`helm ${args.join(' ')}: ${stderr}`);
  return JSON.parse(stdout);
}

/** Load alone for QUIET_MS; resolves the window. */
async function quiet(name) {
  const from = Date.now();
  await waitUntil(`${QUIET_MS / 1000} seconds of load ${name}`, () => Date.now() - from >= QUIET_MS || 'not yet', { timeoutMs: QUIET_MS + 20_000, intervalMs: 500 });
  return { name, from, to: Date.now() };
}

/**
 * What the samples of the upgrade show: whether a pod of the new tag (not a migration Job's) was
 * seen while the schema was not yet migrated; whether the schema was seen migrated while no such
 * pod existed yet; and the span in which the schema was migrated and only old pods of the
 * migrating service were Ready (from the answer that showed the migration to the last question
 * before a new pod showed Ready).
 */
export function upgradeEvidence(samples, { oldTag, newTag, service }) {
  const appPods = (sample, tag) => sample.pods.filter((p) => p.owner === 'ReplicaSet' && p.tag === tag);
  const early = samples.find((s) => s.applied === false && appPods(s, newTag).length > 0);
  let migratedBeforeNewPods = false;
  let migratedAt = null;
  let oldOnlyUntil = null;
  for (let i = 0; i < samples.length; i += 1) {
    const sample = samples[i];
    if (migratedAt === null) {
      if (sample.applied !== true) continue;
      migratedAt = sample.schemaTo;
      // The next question about the pods was asked after this answer.
      const next = samples[i + 1];
      if (next && appPods(next, newTag).length === 0) migratedBeforeNewPods = true;
      continue;
    }
    const pods = sample.pods.filter((p) => p.component === service && p.owner === 'ReplicaSet');
    const newReady = pods.some((p) => p.tag === newTag && p.ready);
    const oldReady = pods.some((p) => p.tag === oldTag && p.ready && !p.deleting);
    if (newReady || !oldReady) break;
    oldOnlyUntil = sample.podsFrom;
  }
  return { early, migratedBeforeNewPods, migratedAt, oldOnlyUntil };
}

function describeSamples(samples) {
  return samples
    .map((s) => {
      const tags = {};
      for (const p of s.pods) tags[`${p.component}:${p.tag.slice(-8)}${p.ready ? '' : '(unready)'}${p.deleting ? '(deleting)' : ''}`] = 1;
      return `${new Date(s.podsFrom).toISOString().slice(11, 23)} applied=${s.applied ?? '-'} ${Object.keys(tags).sort().join(' ')}`;
    })
    .join('\n');
}

export async function runUpgrade(suite, cluster, { receiver, workDir, buildah, images }) {
  const { service, file, column, index } = EXPAND_MIGRATION;
  const upgrade = await buildUpgradeImages({ cluster, buildah, images, workDir, log: (line) => say(`  ${line}`) });
  const release = await describeReleaseForSuite(cluster, { receiver });
  const team = await bootstrapTeam(cluster, release, { name: 'Upgrade', tokenName: 'load' });
  const receiverPath = `/upgrade-${team.team_id}`;
  const before = await helmJson(cluster, ['status', RELEASE]);
  const values = await helmJson(cluster, ['get', 'values', RELEASE]);
  const oldTag = values.image?.tag;
  if (oldTag !== images.tag) throw new Error(`the release runs image tag ${oldTag}, not phase (b)'s ${images.tag}`);
  const schemaBefore = await schemaState(cluster, probePod(await releasePods(cluster)));
  if (schemaBefore.applied || schemaBefore.column || schemaBefore.index)
    throw new Error(`the ${service} schema has the upgrade's migration before the upgrade: ${JSON.stringify(schemaBefore)}`);

  const load = await startLoad(cluster, { release, team, workDir, receiverPath });
  const windows = [await quiet('before the upgrade')];
  let requests = [];
  let upgradeSamples;
  let rollbackSamples = [];
  try {
    // 1. helm upgrade to the new tag, with the release's own values.
    let from = Date.now();
    let sampler = startSampler(cluster, { schema: true });
    try {
      await upgradeRelease(cluster, { values: [values, { image: { tag: upgrade.tag } }], name: 'upgrade' });
      await waitForReleaseReady(cluster);
    } finally {
      upgradeSamples = await sampler.stop();
    }
    windows.push({ name: `helm upgrade to ${upgrade.tag}`, from, to: Date.now(), rollout: 'upgrade' });
    say(`  helm upgrade: every pod Ready on the new tag in ${((Date.now() - from) / 1000).toFixed(1)} s`);
    windows.push(await quiet('between the upgrade and the rollback'));

    // 2. helm rollback to the revision before the upgrade.
    from = Date.now();
    sampler = startSampler(cluster, { schema: false });
    try {
      const result = await cluster.helm(['rollback', RELEASE, String(before.version), '--namespace', RELEASE_NAMESPACE, '--wait', '--timeout=600s']);
      if (result.code !== 0) throw new Error(`helm rollback failed: ${result.stderr || result.stdout}\n${await describeRelease(cluster)}`);
      await waitForReleaseReady(cluster);
    } finally {
      rollbackSamples = await sampler.stop();
    }
    windows.push({ name: `helm rollback to revision ${before.version}`, from, to: Date.now(), rollout: 'rollback' });
    say(`  helm rollback: every pod Ready on the old tag in ${((Date.now() - from) / 1000).toFixed(1)} s`);
    windows.push(await quiet('after the rollback'));
  } finally {
    requests = await load.stop();
  }
  const samplesFile = path.join(workDir, 'upgrade-samples.txt');
  fs.writeFileSync(samplesFile, `upgrade:\n${describeSamples(upgradeSamples)}\n\nrollback:\n${describeSamples(rollbackSamples)}\n`);

  const created = requests.filter((r) => r.kind === 'create' && r.status === 201 && r.issueId !== undefined);
  const skipped = requests.filter((r) => r.kind === 'skipped');
  say(`  load: ${requests.length} requests at ${LOAD.ratePerSecond}/s, ${created.length} issues created, ${skipped.length} not sent (more than ${LOAD.maxInFlight} in flight)`);
  for (const window of windows) {
    const figures = windowFigures(requests, window.from, window.to);
    const samples = figures.samples.map((r) => `${r.kind} ${r.status} ${r.error ?? ''}`.trim()).join('; ');
    say(`  ${window.name}: ${figures.failed} of ${figures.total} requests failed${samples ? ` (${samples})` : ''}`);
  }
  const failedIn = (window) => {
    const inWindow = requests.filter((r) => r.at >= window.from && r.at < window.to);
    return { total: inWindow.length, failed: inWindow.filter((r) => r.kind === 'skipped' || !(r.status >= 200 && r.status < 300)) };
  };

  const evidence = upgradeEvidence(upgradeSamples, { oldTag, newTag: upgrade.tag, service });
  const servedOld = evidence.oldOnlyUntil ? created.filter((r) => r.at > evidence.migratedAt && r.at + r.ms < evidence.oldOnlyUntil) : [];
  await suite.check(`(g) the ${service} service's expand migration (${file}) ran before any pod of the new tag existed`, () => {
    if (evidence.early) throw new Error(`a pod of the new tag existed while the schema was not migrated yet: ${describeSamples([evidence.early])}`);
    if (!evidence.migratedBeforeNewPods) throw new Error(`no sample showed the schema migrated while no pod of the new tag existed (samples: ${samplesFile})`);
  });
  await suite.check(`(g) the old ${service} pods alone served on the migrated schema before a new one was Ready`, () => {
    if (servedOld.length === 0)
      throw new Error(`no issue was created in that span (migrated ${evidence.migratedAt}, old pods alone until ${evidence.oldOnlyUntil}; samples: ${samplesFile})`);
    say(`  ${servedOld.length} issues created by old ${service} pods on the migrated schema, over ${((evidence.oldOnlyUntil - evidence.migratedAt) / 1000).toFixed(1)} s`);
  });
  for (const rollout of ['upgrade', 'rollback']) {
    const window = windows.find((w) => w.rollout === rollout);
    await suite.check(`(g) 0 failed API requests during the helm ${rollout} under load`, () => {
      if (!window) throw new Error(`the ${rollout} did not finish`);
      const { total, failed } = failedIn(window);
      if (total === 0) throw new Error(`no request was made during the ${rollout}`);
      if (failed.length > 0) throw new Error(`${failed.length} of ${total} requests failed: ${JSON.stringify(failed.slice(0, 5))}`);
    });
  }
  await suite.check('(g) 0 failed API requests before, between and after the rollouts', () => {
    const failed = windows.filter((w) => !w.rollout).flatMap((w) => failedIn(w).failed);
    if (failed.length > 0) throw new Error(`${failed.length} requests failed: ${JSON.stringify(failed.slice(0, 5))}`);
  });
  await suite.check(`(g) the rollback ran no migration and every pod runs tag ${oldTag} again, on the migrated schema`, async () => {
    const jobs = rollbackSamples.flatMap((s) => s.pods).filter((p) => p.owner === 'Job');
    if (jobs.length > 0) throw new Error(`migration Job pods during the rollback: ${[...new Set(jobs.map((p) => p.name))].join(', ')}`);
    const pods = (await releasePods(cluster)).filter((p) => p.owner === 'ReplicaSet');
    const others = pods.filter((p) => p.tag !== oldTag);
    if (others.length > 0) throw new Error(`pods not on ${oldTag}: ${others.map((p) => `${p.name} (${p.tag})`).join(', ')}`);
    const schema = await schemaState(cluster, probePod(pods));
    if (!schema.applied || !schema.column || !schema.index) throw new Error(`the migration is not in the schema after the rollback: ${JSON.stringify(schema)}`);
  });
  await suite.check(`(g) the database has the migration: ${file} recorded, ${column} nullable, index ${index}`, async () => {
    const schema = await schemaState(cluster, probePod(await releasePods(cluster)));
    if (!schema.applied) throw new Error(`${file} is not in schema_migrations: ${schema.migrations.join(', ')}`);
    if (schema.column?.is_nullable !== 'YES') throw new Error(`column ${column}: ${JSON.stringify(schema.column)}`);
    if (!schema.index) throw new Error(`no index ${index}`);
  });
  await suite.check('(g) every issue created under the load (upgrade and rollback included) reached the receiver as issue.created: 0 events lost', async () => {
    if (created.length === 0) throw new Error('no issue was created');
    let missing = created;
    let seen = new Map();
    await waitUntil(
      `the receiver has the issue.created event of each of the ${created.length} issues`,
      async () => {
        seen = await deliveredIssues(receiver, receiverPath);
        missing = created.filter((r) => !seen.has(r.issueId));
        return (
          missing.length === 0 ||
          `${missing.length} missing, e.g. issues ${missing
            .slice(0, 10)
            .map((r) => r.issueId)
            .join(', ')}`
        );
      },
      { timeoutMs: EVENTS_TIMEOUT_MS, intervalMs: 2_000 },
    );
    const duplicates = [...seen.values()].filter((count) => count > 1).length;
    say(`  ${created.length} events, all received; ${duplicates} received more than once (at least once is the promise)`);
  });
}
