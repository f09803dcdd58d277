import type { Express } from 'express';
import type { PublicKeys } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { createGrpcServer, type GrpcServer } from '@worklane/grpc';
import { createServiceApp, idempotentPosts, identityIssuersOf, type IdempotencyOptions, type InputLimits } from '@worklane/http';
import { promClient, type Logger, type ServiceMetrics } from '@worklane/observability';
import { loadProto, type ProjectProto } from '@worklane/proto';
import { projectLimits, type ProjectLimits } from './config';
import { organizationRoutes } from './routes/organizations';
import { projectRoutes } from './routes/projects';
import { projectDirectoryHandlers } from './rpc/project-directory';

export interface AppDeps {
  /** Query limits and how much of a 422 is listed (the HTTP_MAX_* settings). */
  inputLimits?: Partial<InputLimits>;
  /** Retry-After of the 503 answered when a dependency is unavailable (UNAVAILABLE_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  pool: Pool;
  logger: Logger;
  metrics: ServiceMetrics;
  /**
   * Public keys of the gateway and console (identity headers of API requests), and of the issue
   * service and the CLI (gRPC callers).
   */
  publicKeys: PublicKeys;
  isReady: () => boolean | Promise<boolean>;
  /** Page sizes and per-team quotas; the configuration's defaults when not given. */
  limits?: ProjectLimits;
  /** Idempotency-Key on POSTs (docs/api-idempotency.md); without it the header is ignored. */
  idempotency?: IdempotencyOptions;
}

/** Who may call each ProjectDirectory method: the CLI administers, the issue service looks projects up. */
export const PROJECT_DIRECTORY_CALLERS = {
  CreateOrganization: ['cli'],
  ListOrganizations: ['cli'],
  GetProject: ['issue'],
} as const;

export interface ProjectApp {
  /** The public API behind the gateway, with /healthz, /readyz and /metrics. */
  http: Express;
  /** ProjectDirectory for the CLI and the issue service, with the standard health service. */
  grpc: GrpcServer;
}

/** Builds the project service's HTTP app and gRPC server; the caller listens. */
export function createApp(deps: AppDeps): ProjectApp {
  const slugConflicts = new promClient.Counter({
    name: 'worklane_project_slug_conflicts_total',
    help: 'Project slugs taken by a concurrent request, each costing one more attempt',
    registers: [deps.metrics.registry],
  });
  const onSlugConflict = () => slugConflicts.inc();
  const limits = deps.limits ?? projectLimits();

  const http = createServiceApp({
    logger: deps.logger,
    inputLimits: deps.inputLimits,
    retryAfterSeconds: deps.retryAfterSeconds,
    metrics: deps.metrics,
    isReady: deps.isReady,
    identityIssuers: identityIssuersOf(deps.publicKeys),
    routes: (router) => {
      if (deps.idempotency) router.use(idempotentPosts(deps.idempotency));
      organizationRoutes(router, { pool: deps.pool, pageLimits: limits.pageLimits, maxOrganizations: limits.maxOrganizations });
      projectRoutes(router, { pool: deps.pool, onSlugConflict, pageLimits: limits.pageLimits, maxProjects: limits.maxProjects });
    },
  });

  const { v1 } = loadProto<ProjectProto>('project').worklane.project;
  const grpc = createGrpcServer({ logger: deps.logger, metrics: deps.metrics, callers: deps.publicKeys });
  grpc.addService(v1.ProjectDirectory.service, projectDirectoryHandlers(deps.pool, limits), PROJECT_DIRECTORY_CALLERS);
  return { http, grpc };
}
