// The project service in-process against a real PostgreSQL database, called with identities
// signed the way the gateway signs them.
import type { Signer } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { createLogger, createMetrics, type ServiceMetrics } from '@worklane/observability';
import { createServiceDatabase, publicKeysOf, signedCaller, signerOf, signingKeyPairs, type Caller, type TestDatabase } from '@worklane/testing';

import { createApp, type ProjectApp } from '../../src/app';
import { TRUSTED_PRINCIPALS } from '../../src/config';

export interface DirectProjectService {
  app: ProjectApp;
  pool: Pool;
  metrics: ServiceMetrics;
  /** The gateway's signer: what the service accepts as the identity of an API request. */
  identityKey: Signer;
  /** Every principal's key pair (PEM), for calls the service must refuse. */
  keys: ReturnType<typeof signingKeyPairs>;
  database: TestDatabase;
  /** A caller acting for `teamId`, as the gateway would forward a token of that team. */
  as(teamId: number, userId?: number): Caller;
  stop(): Promise<void>;
}

export async function startDirectProjectService(): Promise<DirectProjectService> {
  const projectDatabase = await createServiceDatabase('project');
  const { database } = projectDatabase;
  const pool = projectDatabase.pool('project-test', { max: 12 });
  const metrics = createMetrics('project');
  const keys = signingKeyPairs();
  const identityKey = signerOf(keys, 'gateway');
  const app = createApp({ pool, logger: createLogger('project', 'silent'), metrics, publicKeys: publicKeysOf(keys, TRUSTED_PRINCIPALS), isReady: () => true });

  const as = (teamId: number, userId = 1): Caller => signedCaller(app.http, identityKey, teamId, userId);

  return {
    app,
    pool,
    metrics,
    identityKey,
    keys,
    database,
    as,
    async stop() {
      await projectDatabase.drop();
    },
  };
}
