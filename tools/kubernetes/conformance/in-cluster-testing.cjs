// @worklane/testing as the API conformance suite sees it in phase (f) of `npm run test:kubernetes`:
// everything is the real package, except that startSystem() starts nothing. It hands back the
// release running in the test cluster instead (its gateway Service, and the token and project
// services' gRPC addresses with the operator key for the CLI, so bootstrapTeam() works as it does
// against `npm start`), after checking that the release is configured as the suite asks: a suite
// that wants a setting the release does not have fails here, naming it, instead of failing later
// for a reason that is hard to see. The suite itself runs unchanged.
//
// Phase (f) describes the release in the JSON file named by WORKLANE_K8S_SYSTEM_FILE
// (tools/kubernetes/src/conformance.mjs): {gatewayUrl, env, cliPrivateKey, services, config}.
const fs = require('node:fs');
const path = require('node:path');

const real = require(path.join(__dirname, '..', '..', '..', 'packages', 'testing', 'dist', 'index.js'));

/** Settings that only change what a service logs: a suite may ask for them, the release keeps its own. */
const LOG_ONLY = new Set(['LOG_LEVEL']);
/** Settings that are lists of address ranges: the release satisfies the suite when it allows every range asked (and maybe more). */
const RANGE_LISTS = new Set(['WEBHOOK_ALLOWED_CIDRS']);

function described() {
  const file = process.env.WORKLANE_K8S_SYSTEM_FILE;
  if (!file) throw new Error('WORKLANE_K8S_SYSTEM_FILE is not set: this module stands in for @worklane/testing only in phase (f) of npm run test:kubernetes');
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

const list = (value) =>
  String(value)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** What the release lacks of `wanted` ({KEY: value}) for the services in `config` ({service: {KEY: value}}). */
function differences(wanted, config) {
  const problems = [];
  for (const [key, raw] of Object.entries(wanted ?? {})) {
    if (raw === undefined || raw === null || LOG_ONLY.has(key)) continue;
    const value = String(raw);
    const readers = Object.entries(config).filter(([, data]) => key in data);
    if (readers.length === 0) {
      problems.push(`${key}=${value}: no service of the release is configured with ${key}`);
      continue;
    }
    for (const [service, data] of readers) {
      const has = data[key];
      const ok = RANGE_LISTS.has(key) ? list(value).every((range) => list(has).includes(range)) : has === value;
      if (!ok) problems.push(`${key}=${value} asked, the ${service} service has ${has}`);
    }
  }
  return problems;
}

/** The release in the cluster, as a System; stop() leaves it running (the cluster phases own it). */
async function startSystem(options = {}) {
  const release = described();
  const problems = [];
  for (const name of options.services ?? real.START_ORDER) {
    if (!release.services.includes(name)) problems.push(`the suite asks for the ${name} service, which the release does not run`);
  }
  problems.push(...differences(options.env, release.config));
  for (const [service, env] of Object.entries(options.serviceEnv ?? {})) {
    problems.push(...differences(env, { [service]: release.config[service] ?? {} }));
  }
  if (options.readyPaths) problems.push('the suite asks for its own readiness paths; the release is Ready by its probes');
  if (problems.length > 0) throw new Error(`the release in the test cluster is not configured as the suite asks:\n  ${problems.join('\n  ')}`);

  const unsupported = (what) => () => {
    throw new Error(`${what} is not available against the release in the test cluster`);
  };
  return {
    gatewayUrl: release.gatewayUrl,
    urls: {},
    metricsUrls: {},
    grpcAddrs: {},
    env: release.env,
    serviceEnv: {},
    services: {},
    all: [],
    databaseUrl: '',
    natsUrl: undefined,
    keys: { signing: { cli: { privateKey: release.cliPrivateKey } }, webhookSecretKey: '' },
    get database() {
      return unsupported('the test database')();
    },
    startService: unsupported('startService'),
    stop: async () => undefined,
  };
}

module.exports = { ...real, startSystem };
