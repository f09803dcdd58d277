import {
  baseServiceSchema,
  databaseSchema,
  idempotencySettings,
  inputLimitSettings,
  listPageLimits,
  loadConfig,
  pagingSettings,
  port,
  publicKeysSchema,
  teamQuota,
  unavailableSettings,
  z,
} from '@worklane/config';

/** Principals whose public keys this service holds: identity issuers and gRPC callers. */
export const TRUSTED_PRINCIPALS = ['gateway', 'console', 'issue', 'cli'] as const;

export const configSchema = z.object({
  ...baseServiceSchema('project'),
  ...databaseSchema('project'),
  ...inputLimitSettings,
  ...unavailableSettings,
  HTTP_PORT: port(8081).describe('HTTP port of the API, /healthz and /readyz (metrics: METRICS_PORT)'),
  GRPC_PORT: port(7002).describe('Port of the internal ProjectDirectory gRPC service'),
  ...publicKeysSchema(TRUSTED_PRINCIPALS),
  ...pagingSettings,
  ...idempotencySettings,
  TEAM_MAX_ORGANIZATIONS: teamQuota(50, 'Organizations'),
  TEAM_MAX_PROJECTS: teamQuota(1_000, 'Projects (over all its organizations)'),
});

export type Config = z.infer<typeof configSchema>;

export const loadProjectConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);

/** The list and quota limits of a parsed configuration; missing settings take their defaults. */
export function projectLimits(
  config: Partial<Pick<Config, 'LIST_DEFAULT_LIMIT' | 'LIST_MAX_LIMIT' | 'LIST_MAX_PAGE_BYTES' | 'TEAM_MAX_ORGANIZATIONS' | 'TEAM_MAX_PROJECTS'>> = {},
) {
  const { shape } = configSchema;
  return {
    pageLimits: listPageLimits(config),
    maxOrganizations: shape.TEAM_MAX_ORGANIZATIONS.parse(config.TEAM_MAX_ORGANIZATIONS),
    maxProjects: shape.TEAM_MAX_PROJECTS.parse(config.TEAM_MAX_PROJECTS),
  };
}

export type ProjectLimits = ReturnType<typeof projectLimits>;
