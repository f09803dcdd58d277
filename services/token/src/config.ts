import { baseServiceSchema, databaseSchema, loadConfig, port, publicKeysSchema, z, teamQuota } from '@worklane/config';

const seconds = (defaultValue: number) => z.coerce.number().int().min(60).max(31_536_000).default(defaultValue);

/** Principals whose public keys this service holds: its gRPC callers. */
export const TRUSTED_PRINCIPALS = ['gateway', 'console', 'issue', 'cli'] as const;

export const configSchema = z
  .object({
    ...baseServiceSchema('token'),
    ...databaseSchema('token'),
    HTTP_PORT: port(9101).describe('Operations HTTP port: /healthz and /readyz only (metrics: METRICS_PORT)'),
    GRPC_PORT: port(7001).describe('Port of the TokenService and AccountService gRPC API'),
    ...publicKeysSchema(TRUSTED_PRINCIPALS),
    SESSION_IDLE_TIMEOUT_SECONDS: seconds(8 * 3600).describe('A console session ends after this long without a request'),
    SESSION_ABSOLUTE_TIMEOUT_SECONDS: seconds(7 * 24 * 3600).describe('A console session ends this long after sign-in, however active'),
    TOKEN_CACHE_MAX_TTL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(5_000)
      .default(1_000)
      .describe('Longest a gateway may cache an authenticated token (the lease granted); revoking a token waits up to this long; 0 grants no leases'),
    TOKEN_CHANGES_LEASE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(1_000)
      .describe(
        'How long a gateway may go on accepting tokens from its long-lived cache after its last answer from the token change feed; revoking a token waits up to this long, so a revoked token is refused everywhere once the revocation returns; 0 lets gateways keep only leased answers (TOKEN_CACHE_MAX_TTL_MS)',
      ),
    TOKEN_CHANGES_RETENTION_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(600)
      .describe('How long the token change feed keeps a change; a gateway that has not read the feed for longer forgets its whole cache'),
    TEAM_MAX_API_TOKENS: teamQuota(100, 'API tokens'),
    RATE_LIMIT_SWEEP_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .max(3_600_000)
      .default(60_000)
      .describe("How often the gateways' shared API rate-limit buckets that have refilled are deleted, so the table holds only the tokens and teams in use"),
  })
  .refine((config) => config.SESSION_IDLE_TIMEOUT_SECONDS <= config.SESSION_ABSOLUTE_TIMEOUT_SECONDS, {
    message: 'must not be longer than SESSION_ABSOLUTE_TIMEOUT_SECONDS',
    path: ['SESSION_IDLE_TIMEOUT_SECONDS'],
  });

export type Config = z.infer<typeof configSchema>;

export const loadTokenConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);
