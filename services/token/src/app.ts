import type { Express } from 'express';
import type { PublicKeys } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { createGrpcServer, type GrpcServer } from '@worklane/grpc';
import { createServiceApp } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { loadProto, type TokenProto } from '@worklane/proto';
import type { SessionLifetime } from './data/sessions';
import { accountServiceHandlers } from './rpc/account-service';
import { syncRateLimitsHandler } from './rpc/rate-limits';
import { listTokenChangesHandler } from './rpc/token-changes';
import { tokenServiceHandlers } from './rpc/token-service';

export interface AppDeps {
  pool: Pool;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Public keys of the gRPC callers: gateway, console, issue, cli. */
  publicKeys: PublicKeys;
  sessionLifetime: SessionLifetime;
  isReady: () => boolean | Promise<boolean>;
  /** Longest lease Authenticate grants (TOKEN_CACHE_MAX_TTL_MS); 1000 when unset, 0 grants none. */
  tokenCacheMaxTtlMs?: number;
  /** The token change feed's lease (TOKEN_CHANGES_LEASE_MS); 1000 when unset, 0 grants none. */
  tokenChangesLeaseMs?: number;
  /** API tokens one team may hold (TEAM_MAX_API_TOKENS); 100 when unset. */
  maxTokensPerTeam?: number;
}

/** Who may call each method: only the gateway authenticates API tokens, follows their changes and shares rate limits; the console and the CLI manage tokens. */
export const TOKEN_SERVICE_CALLERS = {
  Authenticate: ['gateway'],
  CreateToken: ['console', 'cli'],
  ListTokens: ['console', 'cli'],
  RevokeToken: ['console', 'cli'],
  SyncRateLimits: ['gateway'],
  ListTokenChanges: ['gateway'],
} as const;

/** Sign-in and sessions are the console's; the issue service reads memberships (assignees). */
export const ACCOUNT_SERVICE_CALLERS = {
  CreateUser: ['console', 'cli'],
  GetUserByEmail: ['console', 'cli'],
  CreateTeam: ['console', 'cli'],
  AddMember: ['console', 'cli'],
  ListTeamsForUser: ['console', 'issue', 'cli'],
  VerifyPassword: ['console'],
  CreateSession: ['console'],
  GetSession: ['console'],
  DeleteSession: ['console'],
} as const;

export interface TokenApp {
  /** TokenService and AccountService, with the standard health service. */
  grpc: GrpcServer;
  /** Operations endpoints only: /healthz, /readyz, /metrics. */
  ops: Express;
}

/** Builds the token service's gRPC server and its operations HTTP app; the caller listens. */
export function createApp(deps: AppDeps): TokenApp {
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  const grpc = createGrpcServer({ logger: deps.logger, metrics: deps.metrics, callers: deps.publicKeys });
  grpc.addService(
    v1.TokenService.service,
    {
      ...tokenServiceHandlers({ pool: deps.pool, logger: deps.logger, maxLeaseMs: deps.tokenCacheMaxTtlMs ?? 1_000, maxTokensPerTeam: deps.maxTokensPerTeam ?? 100 }),
      SyncRateLimits: syncRateLimitsHandler(deps.pool),
      ListTokenChanges: listTokenChangesHandler({ db: deps.pool, logger: deps.logger, leaseMs: deps.tokenChangesLeaseMs ?? 1_000 }),
    },
    TOKEN_SERVICE_CALLERS,
  );
  grpc.addService(v1.AccountService.service, accountServiceHandlers({ pool: deps.pool, sessionLifetime: deps.sessionLifetime }), ACCOUNT_SERVICE_CALLERS);
  const ops = createServiceApp({ logger: deps.logger, metrics: deps.metrics, isReady: deps.isReady, routes: () => {} });
  return { grpc, ops };
}
