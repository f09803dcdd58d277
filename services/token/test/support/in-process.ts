// The token service in this process, against a throwaway PostgreSQL database of its own with
// its migrations applied, serving gRPC on a free port: for tests that call its RPCs directly.
import type { Pool } from '@worklane/db';
import { createLogger, createMetrics } from '@worklane/observability';
import { createServiceDatabase, publicKeysOf, signingKeyPairs } from '@worklane/testing';
import { createApp, type AppDeps } from '../../src/app';
import { TRUSTED_PRINCIPALS } from '../../src/config';

export interface InProcessTokenService {
  /** host:port of its gRPC server. */
  address: string;
  pool: Pool;
  /** Every principal's key pair; the service trusts the public keys of TRUSTED_PRINCIPALS. */
  keys: ReturnType<typeof signingKeyPairs>;
  stop(): Promise<void>;
}

export async function startInProcessTokenService(name: string, options: { poolMax: number; deps?: Partial<AppDeps> }): Promise<InProcessTokenService> {
  const keys = signingKeyPairs();
  const database = await createServiceDatabase('token');
  const pool = database.pool(name, { max: options.poolMax });
  const app = createApp({
    pool,
    logger: createLogger('token', 'silent'),
    metrics: createMetrics('token'),
    publicKeys: publicKeysOf(keys, TRUSTED_PRINCIPALS),
    sessionLifetime: { idleSeconds: 3600, absoluteSeconds: 86_400 },
    isReady: () => true,
    ...options.deps,
  });
  const address = `127.0.0.1:${await app.grpc.listen('127.0.0.1', 0)}`;
  return {
    address,
    pool,
    keys,
    async stop() {
      await app.grpc.shutdown();
      await database.drop();
    },
  };
}
