// The project service in-process against a real PostgreSQL database, called with identities
// signed the way the gateway signs them.
import { join } from 'node:path';
import request from 'supertest';
import { createPool, migrate, type Pool } from '@worklane/db';
import { signIdentity } from '@worklane/http';
import { createLogger, createMetrics, type ServiceMetrics } from '@worklane/observability';
import { createTestDatabase, randomKey, type TestDatabase } from '@worklane/testing';
import { createApp, type ProjectApp } from '../../src/app';

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string>;
}

export interface Caller {
  get(path: string): Promise<Reply>;
  delete(path: string): Promise<Reply>;
  post(path: string, body?: unknown): Promise<Reply>;
  patch(path: string, body?: unknown): Promise<Reply>;
  /** Any method, with a raw body and headers, for the edge cases of the HTTP layer. */
  send(method: string, path: string, options?: { body?: string; headers?: Record<string, string> }): Promise<Reply>;
}

export interface DirectProjectService {
  app: ProjectApp;
  pool: Pool;
  metrics: ServiceMetrics;
  identityKey: string;
  database: TestDatabase;
  /** A caller acting for `teamId`, as the gateway would forward a token of that team. */
  as(teamId: number, userId?: number): Caller;
  stop(): Promise<void>;
}

const toReply = (response: request.Response): Reply => ({
  status: response.status,
  body: response.body,
  text: response.text,
  headers: response.headers as Record<string, string>,
});

export async function startDirectProjectService(): Promise<DirectProjectService> {
  const database = await createTestDatabase();
  await migrate(database.url, 'project', join(__dirname, '..', '..', 'migrations'));
  const pool = createPool({ url: database.url, schema: 'project', max: 12, applicationName: 'project-test' });
  const metrics = createMetrics('project');
  const identityKey = randomKey();
  const app = createApp({ pool, logger: createLogger('project', 'silent'), metrics, identityKey, isReady: () => true });

  const as = (teamId: number, userId = 1): Caller => {
    const send: Caller['send'] = async (method, path, options = {}) => {
      let call = request(app.http)[method.toLowerCase() as 'get'](path).set(signIdentity(identityKey, method, path, { teamId, userId, tokenId: userId }));
      for (const [name, value] of Object.entries(options.headers ?? {})) call = call.set(name, value);
      if (options.body !== undefined) call = call.send(options.body);
      return toReply(await call);
    };
    const json = (method: string) => async (path: string, body?: unknown) => {
      let call = request(app.http)[method.toLowerCase() as 'post'](path).set(signIdentity(identityKey, method, path, { teamId, userId, tokenId: userId }));
      call = call.set('Accept', 'application/json');
      if (body !== undefined) call = call.set('Content-Type', 'application/json').send(JSON.stringify(body));
      return toReply(await call);
    };
    return { get: json('GET'), delete: json('DELETE'), post: json('POST'), patch: json('PATCH'), send };
  };

  return {
    app,
    pool,
    metrics,
    identityKey,
    database,
    as,
    async stop() {
      await pool.end();
      await database.drop();
    },
  };
}
