// `npm start` stops the services in stages: each stage only once the one before it has exited.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, test } from '@jest/globals';

import { Supervisor } from '../src/supervisor.mjs';

describe('Supervisor.stopAll', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-supervisor-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  // A service that takes a moment to drain: on SIGTERM it records when it got the signal, and
  // exits 200 ms later.
  const service = (supervisor, name) => {
    const script = `process.on('SIGTERM', () => { require('fs').writeFileSync(${JSON.stringify(path.join(scratch, name))}, String(Date.now())); setTimeout(() => process.exit(0), 200); }); setInterval(() => {}, 1000); process.send('up');`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const exitedAt = new Promise((resolve) => child.once('exit', () => resolve(Date.now())));
    supervisor.procs.set(name, { name, child, lastLines: [], exited: exitedAt });
    return { up: new Promise((resolve) => child.once('message', resolve)), exitedAt };
  };
  const signalledAt = (name) => Number(fs.readFileSync(path.join(scratch, name), 'utf8'));

  test('signals a stage only once every service of the stage before it has exited', async () => {
    const supervisor = new Supervisor({ color: false });
    const gateway = service(supervisor, 'gateway');
    const issue = service(supervisor, 'issue');
    const token = service(supervisor, 'token');
    await Promise.all([gateway.up, issue.up, token.up]);

    const asked = [];
    await supervisor.stopAll({ timeoutMs: 10_000, stages: (names) => (asked.push(names), [['gateway'], ['issue'], ['token']]) });

    expect(asked).toEqual([['gateway', 'issue', 'token']]);
    expect(signalledAt('issue')).toBeGreaterThanOrEqual(await gateway.exitedAt);
    expect(signalledAt('token')).toBeGreaterThanOrEqual(await issue.exitedAt);
  });

  test('stops everything together without stages', async () => {
    const supervisor = new Supervisor({ color: false });
    const a = service(supervisor, 'a');
    const b = service(supervisor, 'b');
    await Promise.all([a.up, b.up]);

    await supervisor.stopAll({ timeoutMs: 10_000 });

    expect(signalledAt('b')).toBeLessThan(await a.exitedAt);
  });
});
