// Phase (f): the API conformance suite (tools/contract-tests/test/conformance.int.test.ts, the one
// `npm test` runs against services it starts) run unchanged against the release in the test
// cluster, through the gateway's Service, plus an issue event delivered to the cluster's HTTPS
// receiver (conformance/receiver.int.test.ts).
//
// The suite asks its system for a few settings (webhooks may point at 127.0.0.0/8, a quota of 3
// webhooks per team); the release gets them through the chart's own values by a `helm upgrade`
// before the suite runs, and conformance/in-cluster-testing.cjs checks that the release really has
// what the suite asks for. jest runs inside the cluster's network namespace, so every request goes
// to the Service addresses there and nowhere else.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { repoRoot, say, turboCacheDir } from '../../dev/src/util.mjs';
import { runLogged, tailOf } from './commands.mjs';
import { RECEIVER_HOST, RECEIVER_PORT } from './receiver.mjs';
import { RELEASE, RELEASE_NAMESPACE, upgradeRelease, waitForReleaseReady } from './release.mjs';

const require = createRequire(import.meta.url);

/** The chart values the conformance suite's system asks for (see its startSystem call), on top of the environment's. */
export function conformanceValues(environment) {
  return {
    webhookAllowedCidrs: [...(environment.webhookAllowedCidrs ?? []), '127.0.0.0/8'],
    teamQuotas: { webhooks: 3 },
  };
}

async function kubectlJson(cluster, args) {
  const { code, stdout, stderr } = await cluster.kubectl([...args, '-o', 'json']);
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${stderr}`);
  return JSON.parse(stdout);
}

/**
 * The release as the suite's stand-in for startSystem() needs it: the gateway's Service address,
 * the gRPC addresses and the operator key the CLI needs to bootstrap teams, each service's
 * configuration (its ConfigMaps and literal variables), and where the receiver is.
 */
export async function describeReleaseForSuite(cluster, { receiver }) {
  const { SERVICES } = require(path.join(repoRoot, 'packages', 'config', 'dist', 'service-table.js'));
  const selector = `app.kubernetes.io/instance=${RELEASE}`;
  const services = (await kubectlJson(cluster, ['get', 'services', '-n', RELEASE_NAMESPACE, '-l', selector])).items;
  const deployments = (await kubectlJson(cluster, ['get', 'deployments', '-n', RELEASE_NAMESPACE, '-l', selector])).items;
  const configMaps = (await kubectlJson(cluster, ['get', 'configmaps', '-n', RELEASE_NAMESPACE])).items;
  const component = (object) => object.metadata.labels?.['app.kubernetes.io/component'];
  const address = (name, portName) => {
    const service = services.find((s) => component(s) === name);
    const port = service?.spec.ports.find((p) => p.name === portName);
    if (!service || !port) throw new Error(`the release has no ${portName} port on a Service of the ${name} service`);
    return `${service.spec.clusterIP}:${port.port}`;
  };

  const config = {};
  for (const deployment of deployments) {
    const data = {};
    for (const container of deployment.spec.template.spec.containers) {
      for (const from of container.envFrom ?? []) {
        const map = from.configMapRef && configMaps.find((c) => c.metadata.name === from.configMapRef.name);
        Object.assign(data, map?.data ?? {});
      }
      for (const variable of container.env ?? []) if (typeof variable.value === 'string') data[variable.name] = variable.value;
    }
    config[component(deployment)] = data;
  }

  const env = {};
  for (const service of SERVICES) {
    if (service.grpcAddrEnv && config[service.name]) env[service.grpcAddrEnv] = address(service.name, 'grpc');
  }
  const cliKey = await kubectlJson(cluster, ['get', 'secret', '-n', RELEASE_NAMESPACE, `${RELEASE}-signing-cli`]);
  return {
    gatewayUrl: `http://${address('gateway', 'http')}`,
    env,
    cliPrivateKey: Buffer.from(cliKey.data['tls.key'], 'base64').toString('utf8'),
    services: Object.keys(config),
    config,
    receiver: { url: `https://${RECEIVER_HOST}:${RECEIVER_PORT}`, host: RECEIVER_HOST, port: RECEIVER_PORT, podIp: receiver.podIp, ca: receiver.pki.ca },
  };
}

/** Builds what the suite imports (compiled packages, the CLI); turbo's cache makes it quick when nothing changed. */
async function buildSuiteDependencies(workDir) {
  const log = path.join(workDir, 'conformance-build.log');
  const turbo = path.join(repoRoot, 'node_modules', '.bin', 'turbo');
  const code = await runLogged(
    turbo,
    [
      'run',
      'build',
      `--cache-dir=${turboCacheDir()}`,
      '--output-logs=errors-only',
      '--filter=@worklane/contract-tests...',
      '--filter=@worklane/cli...',
      '--filter=@worklane/webhooks...',
    ],
    { log, cwd: repoRoot, timeoutMs: 15 * 60_000 },
  );
  if (code !== 0) throw new Error(`building the suite's packages failed (exit ${code}); ${log} ends:\n${tailOf(log)}`);
}

/**
 * Runs phase (f): upgrade to the suite's values, every pod Ready, then jest (in the namespace) over
 * the conformance suite and the receiver test; each jest test is one check of the suite.
 */
export async function runConformance(suite, cluster, { receiver, workDir, environment }) {
  await buildSuiteDependencies(workDir);
  await upgradeRelease(cluster, { values: [environment, conformanceValues(environment)], name: 'conformance' });
  await waitForReleaseReady(cluster);

  const systemFile = path.join(workDir, 'conformance-system.json');
  fs.writeFileSync(systemFile, JSON.stringify(await describeReleaseForSuite(cluster, { receiver }), null, 2), { mode: 0o600 });
  const results = path.join(workDir, 'conformance-results.json');
  const log = path.join(workDir, 'conformance.log');
  const jest = path.join(repoRoot, 'node_modules', 'jest', 'bin', 'jest.js');
  const config = path.join(repoRoot, 'tools', 'kubernetes', 'conformance', 'jest.config.cjs');
  const code = await runLogged('nsenter', [`--net=${cluster.ns}`, process.execPath, jest, '--config', config, '--ci', '--runInBand', '--json', `--outputFile=${results}`], {
    log,
    cwd: repoRoot,
    env: { ...process.env, WORKLANE_K8S_SYSTEM_FILE: systemFile, WORKLANE_K8S_JEST_CACHE: path.join(workDir, 'jest-cache') },
    timeoutMs: 15 * 60_000,
  });
  if (!fs.existsSync(results)) throw new Error(`jest did not finish (exit ${code}); ${log} ends:\n${tailOf(log, 60)}`);
  const report = JSON.parse(fs.readFileSync(results, 'utf8'));
  let counted = 0;
  for (const file of report.testResults) {
    const where = path.relative(repoRoot, file.name);
    for (const test of file.assertionResults) {
      counted += 1;
      const name = `(f) ${where}: ${test.fullName}`;
      if (test.status === 'passed') suite.pass(name);
      else suite.fail(`${name}: ${test.status}\n${(test.failureMessages ?? []).join('\n').split('\n').slice(0, 30).join('\n')}`);
    }
    // A file that failed before any test (its beforeAll, an import) has no assertion results.
    if (file.status === 'failed' && file.assertionResults.every((t) => t.status === 'passed')) {
      suite.fail(`(f) ${where}: ${(file.message || 'failed before its tests').split('\n').slice(0, 30).join('\n')}`);
    }
  }
  if (counted === 0) throw new Error(`jest ran no test (exit ${code}); ${log} ends:\n${tailOf(log, 60)}`);
  say(`  jest: ${report.numPassedTests} passed, ${report.numFailedTests} failed; output in ${log}`);
}
