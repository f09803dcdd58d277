import type { Express } from 'express';
import type { Pool } from '@worklane/db';
import { createGrpcServer, type GrpcServer } from '@worklane/grpc';
import { createServiceApp } from '@worklane/http';
import { promClient, type Logger, type ServiceMetrics } from '@worklane/observability';
import { loadProto, type ProjectProto } from '@worklane/proto';
import { projectLimits, type ProjectLimits } from './config';
import { organizationRoutes } from './routes/organizations';
import { projectRoutes } from './routes/projects';
import { projectDirectoryHandlers } from './rpc/project-directory';

export interface AppDeps {
  pool: Pool;
  logger: Logger;
  metrics: ServiceMetrics;
  /** IDENTITY_SIGNING_KEY: verifies the gateway's identity headers and internal gRPC callers. */
  identityKey: string;
  isReady: () => boolean | Promise<boolean>;
  /** Page sizes and per-team quotas; the configuration's defaults when not given. */
  limits?: ProjectLimits;
}

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
    metrics: deps.metrics,
    isReady: deps.isReady,
    identityKey: deps.identityKey,
    routes: (router) => {
      organizationRoutes(router, { pool: deps.pool, pageLimits: limits.pageLimits, maxOrganizations: limits.maxOrganizations });
      projectRoutes(router, { pool: deps.pool, onSlugConflict, pageLimits: limits.pageLimits, maxProjects: limits.maxProjects });
    },
  });

  const { v1 } = loadProto<ProjectProto>('project').worklane.project;
  const grpc = createGrpcServer({ logger: deps.logger, metrics: deps.metrics, signingKey: deps.identityKey });
  grpc.addService(v1.ProjectDirectory.service, projectDirectoryHandlers(deps.pool, limits));
  return { http, grpc };
}
