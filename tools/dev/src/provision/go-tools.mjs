// Tools built from the Go module proxy: nats-server, helm, promtool and buf. Each is taken, in this order, from
// its override variable, from PATH, from <repo>/.cache/bin, from the user's cache (built by an
// earlier clone on this machine), or built with `go install` into .cache/bin. A binary older than
// the minimum (for buf: any other version than the pinned one) is skipped with one line saying so;
// one in .cache/bin is used only at the pinned version.
import os from 'node:os';
import path from 'node:path';

import { UserError, runChecked, say, which } from '../util.mjs';
import { cacheBinDir, fromUserCache, isExecutable, toUserCache } from './cache.mjs';
import { atLeast, formatVersion, parseVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

export const GO_TOOLS = {
  natsServer: {
    name: 'nats-server',
    override: 'WORKLANE_NATS_SERVER_BIN',
    versionArgs: ['--version'],
    ...TOOLS.natsServer,
    ldflags: () => '',
  },
  helm: {
    name: 'helm',
    override: 'HELM_BIN',
    versionArgs: ['version', '--short'],
    ...TOOLS.helm,
    // A plain `go install` of helm reports only major.minor: stamp the full version in.
    ldflags: (version) => `-X helm.sh/helm/v3/internal/version.version=v${version}`,
  },
  promtool: {
    name: 'promtool',
    override: 'WORKLANE_PROMTOOL_BIN',
    versionArgs: ['--version'],
    ...TOOLS.promtool,
    // Prometheus X.Y.Z is the Go module version v0.(100X+Y).Z; the release build stamps X.Y.Z.
    moduleVersion: (version) => {
      const [major, minor, patch] = parseVersion(version);
      return `v0.${major * 100 + minor}.${patch}`;
    },
    ldflags: (version) => `-X github.com/prometheus/common/version.Version=${version}`,
    // Without the service-discovery plugins (cloud SDKs), which rule tests never use: measured
    // 3.6 min cold on 2 cores, against more than twice that with them.
    tags: ['remove_all_sd'],
  },
  buf: {
    name: 'buf',
    override: 'WORKLANE_BUF_BIN',
    versionArgs: ['--version'],
    ...TOOLS.buf,
    // buf's version is a constant in its source: nothing to stamp.
    ldflags: () => '',
  },
};

/** A binary that is not the project's (override or PATH), if it is recent enough; else null, logged. */
function acceptInstalled(tool, bin, where, env) {
  const version = probeVersion(bin, tool.versionArgs, env);
  if (tool.exact) {
    if (formatVersion(version) === formatVersion(parseVersion(tool.pinned))) return { bin, version: tool.pinned, from: where };
    say(`${tool.name} ${formatVersion(version)} at ${bin} (${where}) is not the ${tool.pinned} Worklane pins: skipping it, using the pinned one`);
    return null;
  }
  if (atLeast(version, tool.minimum)) return { bin, version: formatVersion(version), from: where };
  say(`${tool.name} ${formatVersion(version)} at ${bin} (${where}) is older than the ${tool.minimum} Worklane needs: ` + `skipping it, using the pinned ${tool.pinned}`);
  return null;
}

/** Where the tool would be taken from without building it; null when it must be built. */
export function findGoTool(tool, env = process.env) {
  const override = env[tool.override];
  if (override && isExecutable(override)) {
    const accepted = acceptInstalled(tool, path.resolve(override), tool.override, env);
    if (accepted) return accepted;
  }
  const onPath = which(tool.name, [], env);
  if (onPath && path.dirname(onPath) !== cacheBinDir) {
    const accepted = acceptInstalled(tool, onPath, 'PATH', env);
    if (accepted) return accepted;
  }
  const cached = path.join(cacheBinDir, tool.name);
  const isPinned = (bin) => {
    const v = probeVersion(bin, tool.versionArgs, env);
    return v !== null && formatVersion(v) === formatVersion(parseVersion(tool.pinned));
  };
  if (isExecutable(cached) && isPinned(cached)) return { bin: cached, version: tool.pinned, from: '.cache/bin' };
  const copied = fromUserCache(tool.name, tool.pinned);
  if (copied && isPinned(copied)) return { bin: copied, version: tool.pinned, from: 'the user cache' };
  return null;
}

export function findGo(env = process.env) {
  const go = which('go', ['/usr/local/go/bin', path.join(os.homedir(), 'go', 'bin')], env);
  if (!go) return null;
  return atLeast(probeVersion(go, ['version'], env), TOOLS.go.minimum) ? go : null;
}

/** Builds the pinned version into .cache/bin with go install; returns its path. */
export async function buildGoTool(tool, env = process.env) {
  const go = findGo(env);
  if (!go) {
    throw new UserError(
      `${tool.name} ${tool.minimum}+ was not found, and Go ${TOOLS.go.minimum}+ is not installed to build it.\n` +
        'Install Go (https://go.dev/doc/install; Debian: `sudo apt-get install -y golang-go`) and run again, ' +
        `or put ${tool.name} ${tool.minimum}+ on PATH.`,
    );
  }
  const args = ['install', '-trimpath'];
  if (tool.tags?.length) args.push(`-tags=${tool.tags.join(',')}`);
  const ldflags = tool.ldflags(tool.pinned);
  if (ldflags) args.push(`-ldflags=${ldflags}`);
  args.push(`${tool.module}@${tool.moduleVersion ? tool.moduleVersion(tool.pinned) : `v${tool.pinned}`}`);
  await runChecked(go, args, { env: { ...env, GOBIN: cacheBinDir } });
  const bin = path.join(cacheBinDir, tool.name);
  if (!isExecutable(bin)) throw new Error(`go install finished but ${bin} is missing`);
  toUserCache(tool.name, tool.pinned);
  return bin;
}

const ensured = new Map();

/** {bin, version, from}: found, or built (about 1 to 3 minutes, once per machine); once per process. */
export function ensureGoTool(tool) {
  if (!ensured.has(tool.name)) {
    const result = (async () => {
      const found = findGoTool(tool);
      if (found) return found;
      say(`building ${tool.name} ${tool.pinned} into .cache/bin (go install, once per machine)`);
      return { bin: await buildGoTool(tool), version: tool.pinned, from: 'go install' };
    })();
    ensured.set(tool.name, result);
    result.catch(() => ensured.delete(tool.name));
  }
  return ensured.get(tool.name);
}
