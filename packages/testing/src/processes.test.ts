// startService / startSystem / the CLI helpers against a fake repository whose "services" are tiny
// HTTP servers; createTestDatabase and startNatsServer against the servers `npm test` provides.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from 'pg';
import { SERVICES, serviceUrlEnv } from '@worklane/config';

import { bootstrapTeam, createToken, revokeToken } from './cli';
import { createTestDatabase } from './database';
import { startNatsServer } from './nats';
import { freePorts } from './ports';
import { findExecutable } from './repo';
import { startService } from './service';
import { startSystem } from './system';

const FAKE_SERVICE = `
const http = require('node:http');
const name = process.env.OTEL_SERVICE_NAME;
if (process.env.FAKE_CRASH === '1') { console.error('boom: bad configuration'); process.exit(3); }
const ready = process.env.FAKE_NOT_READY !== '1';
// FAKE_PORT_TAKEN_ONCE=<file>: the first start (the file does not exist yet) finds its HTTP port
// taken, as when another process took it after it was chosen.
const takenOnce = process.env.FAKE_PORT_TAKEN_ONCE;
if (takenOnce && !require('node:fs').existsSync(takenOnce)) {
  require('node:fs').writeFileSync(takenOnce, String(process.env.HTTP_PORT));
  const other = http.createServer().listen(Number(process.env.HTTP_PORT), process.env.HOST, () => {
    http.createServer().on('error', (err) => { console.error(JSON.stringify({ level: 'fatal', msg: 'failed to start', err: { message: err.message } })); process.exit(1); })
      .listen(Number(process.env.HTTP_PORT), process.env.HOST);
  });
  other.unref();
  return;
}
const server = http.createServer((req, res) => {
  if (req.url === '/readyz' || req.url === '/healthz') { res.writeHead(ready ? 200 : 503).end(); return; }
  if (req.url === '/env') { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(process.env)); return; }
  res.writeHead(404).end();
});
server.listen(Number(process.env.HTTP_PORT), process.env.HOST, () => console.log(JSON.stringify({ msg: name + ' started' })));
process.on('SIGTERM', () => { console.log('draining'); server.close(() => process.exit(0)); });
`;

const FAKE_CLI = `
const argv = process.argv.slice(2);
console.error('fake cli');
if (process.env.FAKE_CLI_FAIL === '1') { console.error('no such team'); process.exit(2); }
const env = { TOKEN_SERVICE_ADDR: process.env.TOKEN_SERVICE_ADDR, PROJECT_GRPC_ADDR: process.env.PROJECT_GRPC_ADDR,
  CLI_PRIVATE_KEY: process.env.CLI_PRIVATE_KEY, DATABASE_URL: process.env.DATABASE_URL };
if (argv[0] === 'bootstrap') console.log(JSON.stringify({ user_id: 1, team_id: 2, organization_id: 3, token_id: 4, token: 'wl_fake', argv, env }));
else if (argv[1] === 'create') console.log(JSON.stringify({ token_id: 5, token: 'wl_fake2', argv }));
`;

let fakeRoot: string;
const savedRoot = process.env.WORKLANE_REPO_ROOT;

beforeAll(() => {
  fakeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-testing-'));
  for (const s of SERVICES) {
    fs.mkdirSync(path.join(fakeRoot, 'services', s.name, 'dist'), { recursive: true });
    fs.writeFileSync(path.join(fakeRoot, 'services', s.name, 'dist', 'main.js'), FAKE_SERVICE);
  }
  fs.mkdirSync(path.join(fakeRoot, 'tools', 'worklane', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(fakeRoot, 'tools', 'worklane', 'bin', 'worklane.mjs'), FAKE_CLI);
  process.env.WORKLANE_REPO_ROOT = fakeRoot;
});

afterAll(() => {
  if (savedRoot === undefined) delete process.env.WORKLANE_REPO_ROOT;
  else process.env.WORKLANE_REPO_ROOT = savedRoot;
  fs.rmSync(fakeRoot, { recursive: true, force: true });
});

async function envOf(url: string): Promise<Record<string, string>> {
  return (await (await fetch(`${url}/env`)).json()) as Record<string, string>;
}

describe('startService', () => {
  it('starts on free ports with the given env, keeps the logs, restarts on the same ports and stops', async () => {
    const svc = await startService('project', { GATEWAY_PUBLIC_KEY: 'k'.repeat(40), EXTRA: 7 });
    try {
      expect(svc.grpcPort).not.toBeNull();
      expect(svc.grpcAddr).toBe(`127.0.0.1:${svc.grpcPort}`);
      const env = await envOf(svc.url);
      expect(env).toMatchObject({
        HTTP_PORT: String(svc.httpPort),
        GRPC_PORT: String(svc.grpcPort),
        HOST: '127.0.0.1',
        DATABASE_SCHEMA: 'project',
        OTEL_SERVICE_NAME: 'project',
        EXTRA: '7',
      });
      expect(svc.logs()).toContain('project started');
      const firstPid = svc.pid;
      await svc.restart();
      expect(svc.pid).not.toBe(firstPid);
      expect((await envOf(svc.url)).HTTP_PORT).toBe(String(svc.httpPort));
    } finally {
      expect(await svc.stop()).toEqual({ code: 0, signal: null });
    }
    expect(svc.logs()).toContain('draining');
    expect(await svc.stop()).toEqual({ code: 0, signal: null });
  });

  it('kill() is a SIGKILL', async () => {
    const svc = await startService('gateway', { HTTP_PORT: undefined });
    expect(svc.grpcPort).toBeNull();
    expect(await svc.kill()).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('reports a service that dies during start with its output', async () => {
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      await expect(startService('token', { FAKE_CRASH: '1' })).rejects.toThrow(/exited with code 3[\s\S]*boom: bad configuration/);
    } finally {
      process.stderr.write = stderr;
    }
  });

  it('starts again on new ports when a port chosen for it was taken before it listened', async () => {
    const marker = path.join(fakeRoot, 'port-taken-once');
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      const svc = await startService('webhook', { FAKE_PORT_TAKEN_ONCE: marker });
      try {
        const takenPort = Number(fs.readFileSync(marker, 'utf8'));
        expect(svc.httpPort).not.toBe(takenPort);
        expect((await envOf(svc.url)).HTTP_PORT).toBe(String(svc.httpPort));
        expect(svc.logs()).toMatch(/EADDRINUSE[\s\S]*starting again on new ports[\s\S]*webhook started/);
      } finally {
        await svc.stop();
      }
    } finally {
      process.stderr.write = stderr;
      fs.rmSync(marker, { force: true });
    }
  });

  it('does not start again on ports the caller gave', async () => {
    const [http, grpc, metrics] = await freePorts(3);
    // The given HTTP port stays taken (its connections refused at once): starting again on it
    // could only fail again.
    const holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(http, '127.0.0.1', resolve));
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      const started = startService('webhook', { HTTP_PORT: http, GRPC_PORT: grpc, METRICS_PORT: metrics });
      await expect(started).rejects.toThrow(/exited with code 1[\s\S]*EADDRINUSE/);
      await expect(started).rejects.not.toThrow(/starting again/);
    } finally {
      process.stderr.write = stderr;
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('reports a service that never gets ready', async () => {
    await expect(startService('issue', { FAKE_NOT_READY: '1' }, { readyTimeoutMs: 500 })).rejects.toThrow(/did not answer 200 within 500 ms/);
  });

  it('says what is missing', async () => {
    await expect(startService('nope', {})).rejects.toThrow(/services\/nope\/dist\/main.js does not exist/);
  });
});

const withDatabase = process.env.DATABASE_URL ? describe : describe.skip;

withDatabase('createTestDatabase', () => {
  it('creates a fresh database and drops it', async () => {
    const db = await createTestDatabase();
    expect(db.name).toMatch(/^wl_test_[0-9a-f]{16}$/);
    const client = new Client({ connectionString: db.url });
    client.on('error', () => undefined); // terminated by the drop below
    await client.connect();
    const { rows } = await client.query('select current_database() as name');
    expect(rows[0].name).toBe(db.name);
    await db.drop(); // with the client still connected
    await client.end().catch(() => undefined);
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const left = await admin.query('select 1 from pg_database where datname = $1', [db.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });
});

withDatabase('startSystem', () => {
  it('wires the services together on free ports, with one database and random keys', async () => {
    const system = await startSystem({ services: ['token', 'project', 'issue', 'gateway'], env: { NATS_URL: 'nats://127.0.0.1:1', LOG_LEVEL: 'warn' } });
    try {
      expect(Object.keys(system.services).sort()).toEqual(['gateway', 'issue', 'project', 'token']);
      const gateway = await envOf(system.gatewayUrl);
      const token = await envOf(system.urls.token);
      const issue = await envOf(system.urls.issue);
      expect(gateway.TOKEN_SERVICE_ADDR).toBe(system.grpcAddrs.token);
      expect(system.grpcAddrs.token).toBe(`127.0.0.1:${token.GRPC_PORT}`);
      expect(gateway.PROJECT_SERVICE_URL).toBe(system.urls.project);
      expect(gateway.DATABASE_URL).toBeUndefined();
      expect(token.DATABASE_URL).toBe(system.databaseUrl);
      expect(system.databaseUrl).toMatch(/\/wl_test_[0-9a-f]+$/);
      expect(token.DATABASE_SCHEMA).toBe('token');
      expect(issue).toMatchObject({ NATS_URL: 'nats://127.0.0.1:1', PROJECT_GRPC_ADDR: system.grpcAddrs.project, LOG_LEVEL: 'warn' });
      // Every service holds the public keys; each signing service only its own private key.
      expect(gateway.SIGNING_PRIVATE_KEY).toBe(system.keys.signing.gateway.privateKey);
      expect(issue.SIGNING_PRIVATE_KEY).toBe(system.keys.signing.issue.privateKey);
      expect(token.SIGNING_PRIVATE_KEY).toBeUndefined();
      expect(token.GATEWAY_PUBLIC_KEY).toBe(system.keys.signing.gateway.publicKey);
      expect(system.keys.signing.gateway.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(system.env.SIGNING_PRIVATE_KEY).toBeUndefined();

      const replica = await system.startService('gateway');
      expect(replica.url).not.toBe(system.gatewayUrl);
      expect((await envOf(replica.url)).TOKEN_SERVICE_ADDR).toBe(system.grpcAddrs.token);

      const team = await bootstrapTeam(system, { email: 'a@example.test' });
      expect(team).toMatchObject({ user_id: 1, team_id: 2, organization_id: 3, token_id: 4, token: 'wl_fake', email: 'a@example.test' });
      const { argv, env } = team as unknown as { argv: string[]; env: Record<string, string> };
      expect(argv).toEqual(expect.arrayContaining(['bootstrap', '--email', 'a@example.test', '--password', team.password, '--team', '--organization', '--token-name']));
      expect(env).toEqual({
        TOKEN_SERVICE_ADDR: system.grpcAddrs.token,
        PROJECT_GRPC_ADDR: system.grpcAddrs.project,
        CLI_PRIVATE_KEY: system.keys.signing.cli.privateKey,
        DATABASE_URL: system.databaseUrl,
      });
      expect(await createToken(system, { teamId: 2, email: 'a@example.test', name: 'ci' })).toMatchObject({
        token_id: 5,
        token: 'wl_fake2',
        argv: ['token', 'create', '--team', '2', '--email', 'a@example.test', '--name', 'ci'],
      });
      await expect(revokeToken(system, { teamId: 2, tokenId: 5 })).resolves.toBeUndefined();
      process.env.FAKE_CLI_FAIL = '1';
      try {
        await expect(revokeToken(system, { teamId: 2, tokenId: 5 })).rejects.toThrow(/exit 2[\s\S]*no such team/);
      } finally {
        delete process.env.FAKE_CLI_FAIL;
      }
    } finally {
      await system.stop();
    }
    for (const handle of system.all) expect(handle.process.exitCode ?? handle.process.signalCode).not.toBeNull();
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const left = await admin.query('select 1 from pg_database where datname = $1', [system.database.name]);
    await admin.end();
    expect(left.rowCount).toBe(0);
  });

  it('starts again on new ports, rewired, when a port chosen for it was taken before its service listened', async () => {
    const marker = path.join(fakeRoot, 'system-port-taken-once');
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    let system: Awaited<ReturnType<typeof startSystem>> | undefined;
    try {
      system = await startSystem({ services: ['token', 'webhook', 'gateway'], serviceEnv: { webhook: { FAKE_PORT_TAKEN_ONCE: marker } } });
      const takenPort = Number(fs.readFileSync(marker, 'utf8'));
      expect(system.services.webhook?.httpPort).not.toBe(takenPort);
      expect((await envOf(system.urls.webhook)).HTTP_PORT).toBe(String(system.services.webhook?.httpPort));
      expect((await envOf(system.gatewayUrl))[serviceUrlEnv('webhook')]).toBe(system.urls.webhook);
      expect(system.all.map((h) => h.name).sort()).toEqual(['gateway', 'token', 'webhook']);
    } finally {
      process.stderr.write = stderr;
      await system?.stop();
      fs.rmSync(marker, { force: true });
    }
  });

  it('stops what it started when a service fails', async () => {
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      await expect(startSystem({ services: ['token', 'project', 'webhook'], serviceEnv: { webhook: { FAKE_CRASH: '1' } } })).rejects.toThrow(/webhook exited with code 3/);
    } finally {
      process.stderr.write = stderr;
    }
  });
});

const natsBin = findExecutable('nats-server', process.env.WORKLANE_NATS_SERVER_BIN);
const withNats = natsBin ? describe : describe.skip;

function natsInfo(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once('error', reject);
  });
}

withNats('startNatsServer', () => {
  it('starts a JetStream server that can be restarted, killed and started on the same port', async () => {
    const nats = await startNatsServer();
    try {
      expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);
      expect(await natsInfo(nats.port)).toMatch(/^INFO .*"jetstream":true/);
      await nats.restart();
      expect(await natsInfo(nats.port)).toMatch(/^INFO/);
      await nats.kill();
      await expect(natsInfo(nats.port)).rejects.toThrow();
      await nats.start();
      expect(await natsInfo(nats.port)).toMatch(/^INFO/);
    } finally {
      await nats.stop();
    }
    expect(fs.existsSync(nats.storeDir)).toBe(false);
  });
});
