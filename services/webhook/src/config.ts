import {
  ConfigError,
  baseServiceSchema,
  databaseSchema,
  idempotencySettings,
  inputLimitSettings,
  list,
  listPageLimits,
  loadConfig,
  pagingSettings,
  port,
  publicKeysSchema,
  secretKey,
  teamQuota,
  unavailableSettings,
  z,
} from '@worklane/config';
import { webhookChangesSettingsSchema } from '@worklane/messaging/stream-limits';
import { receiverAddressSettings } from '@worklane/webhooks/settings';

/** Principals whose public keys this service holds: identity issuers and gRPC callers. */
export const TRUSTED_PRINCIPALS = ['gateway', 'console', 'delivery'] as const;

export const configSchema = z.object({
  ...baseServiceSchema('webhook'),
  ...databaseSchema('webhook'),
  ...inputLimitSettings,
  ...unavailableSettings,
  HTTP_PORT: port(8082).describe('HTTP port of the API, /healthz and /readyz (metrics: METRICS_PORT)'),
  GRPC_PORT: port(7003).describe('Port of the internal WebhookDirectory gRPC service'),
  ...publicKeysSchema(TRUSTED_PRINCIPALS),
  NATS_URL: z.string().min(1).describe('NATS servers (JetStream enabled), comma-separated'),
  ...webhookChangesSettingsSchema,
  WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(5_000)
    .describe(
      'How long a webhook change waits for NATS to store its notice before the call is answered; past it the call gets 503 (the change itself is saved) and the notice is published again in the background',
    ),
  WEBHOOK_SECRET_KEY: secretKey().describe('Key (>= 32 characters) that encrypts webhook signing secrets at rest (AES-256-GCM)'),
  WEBHOOK_PREVIOUS_SECRET_KEYS: list('')
    .pipe(z.array(z.string().min(32, 'each key must be at least 32 characters')))
    .describe('Comma-separated keys that WEBHOOK_SECRET_KEY replaced; secrets they encrypted are re-encrypted at start'),
  ...receiverAddressSettings,
  WEBHOOK_DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000).describe('Time allowed to resolve a webhook host when a URL is saved'),
  ...pagingSettings,
  ...idempotencySettings,
  TEAM_MAX_WEBHOOKS: teamQuota(100, 'Webhooks'),
  WEBHOOK_PREVIOUS_SECRETS_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(5)
    .describe('Old secrets of a webhook that may still sign at once after rotations; one more rotation with an overlap is refused (HTTP 409 `secret_rotation_limit`)'),
  WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_592_000)
    .default(86_400)
    .describe('Seconds a rotated-out secret keeps signing when the rotation names no overlap_seconds (at most WEBHOOK_SECRET_OVERLAP_MAX_SECONDS)'),
  WEBHOOK_SECRET_OVERLAP_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_592_000)
    .default(604_800)
    .describe('Longest overlap_seconds a secret rotation may ask for (7 days by default); more is refused with 422'),
  WEBHOOK_RATE_LIMIT_MAX_PER_SECOND: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1_000)
    .describe('Highest rate_limit_per_second a webhook may be given; more is refused with 422'),
});

export type Config = z.infer<typeof configSchema>;

export function loadWebhookConfig(env?: Record<string, string | undefined>): Config {
  const config = loadConfig(configSchema, env);
  if (config.WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS > config.WEBHOOK_SECRET_OVERLAP_MAX_SECONDS) {
    throw new ConfigError([
      `WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: ${config.WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS} exceeds WEBHOOK_SECRET_OVERLAP_MAX_SECONDS (${config.WEBHOOK_SECRET_OVERLAP_MAX_SECONDS})`,
    ]);
  }
  return config;
}

type LimitSettings =
  | 'LIST_DEFAULT_LIMIT'
  | 'LIST_MAX_LIMIT'
  | 'LIST_MAX_PAGE_BYTES'
  | 'TEAM_MAX_WEBHOOKS'
  | 'WEBHOOK_PREVIOUS_SECRETS_MAX'
  | 'WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS'
  | 'WEBHOOK_SECRET_OVERLAP_MAX_SECONDS'
  | 'WEBHOOK_RATE_LIMIT_MAX_PER_SECOND';

/** The list, quota, rotation and rate limits of a parsed configuration; missing settings take their defaults. */
export function webhookLimits(config: Partial<Pick<Config, LimitSettings>> = {}) {
  const { shape } = configSchema;
  return {
    pageLimits: listPageLimits(config),
    maxWebhooks: shape.TEAM_MAX_WEBHOOKS.parse(config.TEAM_MAX_WEBHOOKS),
    rotation: {
      maxPreviousSecrets: shape.WEBHOOK_PREVIOUS_SECRETS_MAX.parse(config.WEBHOOK_PREVIOUS_SECRETS_MAX),
      defaultOverlapSeconds: shape.WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS.parse(config.WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS),
      maxOverlapSeconds: shape.WEBHOOK_SECRET_OVERLAP_MAX_SECONDS.parse(config.WEBHOOK_SECRET_OVERLAP_MAX_SECONDS),
    },
    maxRateLimitPerSecond: shape.WEBHOOK_RATE_LIMIT_MAX_PER_SECOND.parse(config.WEBHOOK_RATE_LIMIT_MAX_PER_SECOND),
  };
}

export type WebhookLimits = ReturnType<typeof webhookLimits>;
