import type { Express } from 'express';
import type { Pool } from '@worklane/db';
import { createGrpcServer, type GrpcServer } from '@worklane/grpc';
import { createServiceApp } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { loadProto, type TokenProto } from '@worklane/proto';
import type { SessionLifetime } from './data/sessions';
import { accountServiceHandlers } from './rpc/account-service';
import { tokenServiceHandlers } from './rpc/token-service';

export interface AppDeps {
  pool: Pool;
  logger: Logger;
  metrics: ServiceMetrics;
  signingKey: string;
  sessionLifetime: SessionLifetime;
  isReady: () => boolean | Promise<boolean>;
  /** Longest lease Authenticate grants (TOKEN_CACHE_MAX_TTL_MS); 1000 when unset, 0 grants none. */
  tokenCacheMaxTtlMs?: number;
}

export interface TokenApp {
  /** TokenService and AccountService, with the standard health service. */
  grpc: GrpcServer;
  /** Operations endpoints only: /healthz, /readyz, /metrics. */
  ops: Express;
}

/** Builds the token service's gRPC server and its operations HTTP app; the caller listens. */
export function createApp(deps: AppDeps): TokenApp {
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  const grpc = createGrpcServer({ logger: deps.logger, metrics: deps.metrics, signingKey: deps.signingKey });
  grpc.addService(v1.TokenService.service, tokenServiceHandlers({ pool: deps.pool, logger: deps.logger, maxLeaseMs: deps.tokenCacheMaxTtlMs ?? 1_000 }));
  grpc.addService(v1.AccountService.service, accountServiceHandlers({ pool: deps.pool, sessionLifetime: deps.sessionLifetime }));
  const ops = createServiceApp({ logger: deps.logger, metrics: deps.metrics, isReady: deps.isReady, routes: () => {} });
  return { grpc, ops };
}
