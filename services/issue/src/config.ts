import {
  baseServiceSchema,
  databaseSchema,
  grpcAddress,
  loadConfig,
  port,
  privateSigningKey,
  publicKeysSchema,
  z,
  idempotencySettings,
  inputLimitSettings,
  pagingSettings,
  serviceThreadSettings,
  unavailableSettings,
} from '@worklane/config';
import { streamSettingsSchema } from '@worklane/messaging/stream-limits';
import { DEFAULT_HANDOVER_MAX_LOOP_UTILIZATION } from './events/handover-gate';

/** Who may sign the caller identity of an API request. */
export const IDENTITY_ISSUERS = ['gateway', 'console'] as const;

export const configSchema = z.object({
  ...baseServiceSchema('issue'),
  ...databaseSchema('issue'),
  ...inputLimitSettings,
  ...unavailableSettings,
  HTTP_PORT: port(8083).describe('HTTP port of the API, /healthz and /readyz (metrics: METRICS_PORT)'),
  SIGNING_PRIVATE_KEY: privateSigningKey().describe(
    "This service's own Ed25519 private key (PKCS#8 PEM): signs its gRPC calls and, on the gateway and console, the caller identities they forward; no other service holds it",
  ),
  ...publicKeysSchema(IDENTITY_ISSUERS),
  NATS_URL: z.string().min(1).describe('NATS servers (JetStream enabled), comma-separated'),
  PROJECT_GRPC_ADDR: grpcAddress('127.0.0.1:7002').describe('host:port of the project service (ProjectDirectory)'),
  TOKEN_SERVICE_ADDR: grpcAddress('127.0.0.1:7001').describe('host:port of the token service (AccountService, to check assignees)'),
  PROJECT_CACHE_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(1_000)
    .describe('How long a project found in the project service is remembered (0: ask on every request)'),
  ISSUE_UPDATE_OPTIMISTIC_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(3)
    .describe(
      'Compare-and-set writes an issue update tries (each reading the issue again after a concurrent update changed it) before it works the update out under the row lock; 0: always under the row lock',
    ),
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100).describe('Outbox rows the relay claims and publishes per transaction'),
  OUTBOX_DATABASE_POOL_MAX: z.coerce
    .number()
    .int()
    .min(2)
    .max(50)
    .default(3)
    .describe("Connections of the outbox relay's own pool (one listens for new events), apart from the API's DATABASE_POOL_MAX so requests never hold up publishing"),
  OUTBOX_POLL_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000).describe('Relay poll interval when no notification arrives'),
  OUTBOX_LEASE_SECONDS: z.coerce
    .number()
    .int()
    .min(5)
    .max(600)
    .default(15)
    .describe('How long a relay owns the outbox rows it took: well beyond a publish, and the longest a relay that dies mid-publish delays them'),
  OUTBOX_HANDOVER_MAX_LOOP_UTILIZATION: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_HANDOVER_MAX_LOOP_UTILIZATION)
    .describe(
      "A create hands its committed event straight to the outbox relay's thread only while the API thread's event loop was busy less than this share of the last 100 ms (the hand-over waits for that loop); otherwise the relay claims the event, woken by the commit's notification. 1: always hand over; 0: never",
    ),
  OUTBOX_MARK_WITHIN_MS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(100)
    .describe('Longest a published outbox row waits to be marked when no claim comes sooner; a later event of its issue waits at most this long for it'),
  OUTBOX_RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(86_400_000)
    .default(600_000)
    .describe('How often expired outbox rows and dead letters are looked for once none is left'),
  OUTBOX_RETENTION_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(100)
    .max(100_000)
    .default(10_000)
    .describe('Expired outbox rows removed per statement; batches run back to back until none is left'),
  OUTBOX_RETENTION_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 30)
    .default(24)
    .describe('How long published outbox rows are kept'),
  ...pagingSettings,
  ...serviceThreadSettings,
  ...idempotencySettings,
  OUTBOX_DEAD_LETTER_RETENTION_DAYS: z.coerce.number().min(1).max(3_650).default(30).describe('How long events that could never be published are kept in outbox_dead_letters'),
  ...streamSettingsSchema,
});

export type Config = z.infer<typeof configSchema>;

export const loadIssueConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);
