import {
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
import { receiverAddressSettings } from '@worklane/webhooks';

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
  WEBHOOK_SECRET_KEY: secretKey().describe('Key (>= 32 characters) that encrypts webhook signing secrets at rest (AES-256-GCM)'),
  WEBHOOK_PREVIOUS_SECRET_KEYS: list('')
    .pipe(z.array(z.string().min(32, 'each key must be at least 32 characters')))
    .describe('Comma-separated keys that WEBHOOK_SECRET_KEY replaced; secrets they encrypted are re-encrypted at start'),
  ...receiverAddressSettings,
  WEBHOOK_DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000).describe('Time allowed to resolve a webhook host when a URL is saved'),
  ...pagingSettings,
  ...idempotencySettings,
  TEAM_MAX_WEBHOOKS: teamQuota(100, 'Webhooks'),
});

export type Config = z.infer<typeof configSchema>;

export const loadWebhookConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);

/** The list and quota limits of a parsed configuration; missing settings take their defaults. */
export function webhookLimits(config: Partial<Pick<Config, 'LIST_DEFAULT_LIMIT' | 'LIST_MAX_LIMIT' | 'LIST_MAX_PAGE_BYTES' | 'TEAM_MAX_WEBHOOKS'>> = {}) {
  const { shape } = configSchema;
  return {
    pageLimits: listPageLimits(config),
    maxWebhooks: shape.TEAM_MAX_WEBHOOKS.parse(config.TEAM_MAX_WEBHOOKS),
  };
}

export type WebhookLimits = ReturnType<typeof webhookLimits>;
