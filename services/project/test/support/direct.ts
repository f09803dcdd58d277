// The project service in-process against a real PostgreSQL database, called with identities
// signed the way the gateway signs them.
import { join } from 'node:path';
import { createPool, migrate, type Pool } from '@worklane/db';
import { createLogger, createMetrics, type ServiceMetrics } from '@worklane/observability';
import { createTestDatabase, randomKey, signedCaller, type Caller, type TestDatabase } from '@worklane/testing';

import { createApp, type ProjectApp } from '../../src/app';

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

export async function startDirectProjectService(): Promise<DirectProjectService> {
  const database = await createTestDatabase();
  await migrate(database.url, 'project', join(__dirname, '..', '..', 'migrations'));
  const pool = createPool({ url: database.url, schema: 'project', max: 12, applicationName: 'project-test' });
  const metrics = createMetrics('project');
  const identityKey = randomKey();
  const app = createApp({ pool, logger: createLogger('project', 'silent'), metrics, identityKey, isReady: () => true });

  const as = (teamId: number, userId = 1): Caller => signedCaller(app.http, identityKey, teamId, userId);

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
