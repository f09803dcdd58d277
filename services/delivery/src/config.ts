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
import { streamSettingsSchema, webhookChangesSettingsSchema } from '@worklane/messaging/stream-limits';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '@worklane/webhooks/retry-schedule';
import { receiverAddressSettings } from '@worklane/webhooks/settings';
import { DEFAULT_DEFER_BATCH_SIZE } from './sending/circuit-breaker';
import { DEFAULT_TEAM_CONNECTIONS_BURST, DEFAULT_TEAM_CONNECTIONS_PER_SECOND } from './sending/connection-pacing';
import { DEFAULT_LAUNCHES_PER_TURN } from './sending/launch-turns';

const milliseconds = (defaultMs: number, max: number) => z.coerce.number().int().min(1).max(max).default(defaultMs);

/** Who may sign the caller identity of an API request. */
export const IDENTITY_ISSUERS = ['gateway', 'console'] as const;

export const configSchema = z.object({
  ...baseServiceSchema('delivery'),
  ...databaseSchema('delivery'),
  ...inputLimitSettings,
  ...unavailableSettings,
  HTTP_PORT: port(8084).describe('HTTP port of the delivery log API, /healthz and /readyz (metrics: METRICS_PORT)'),
  SIGNING_PRIVATE_KEY: privateSigningKey().describe(
    "This service's own Ed25519 private key (PKCS#8 PEM): signs its gRPC calls and, on the gateway and console, the caller identities they forward; no other service holds it",
  ),
  ...publicKeysSchema(IDENTITY_ISSUERS),
  NATS_URL: z.string().min(1).describe('NATS servers (JetStream enabled), comma-separated'),
  WEBHOOK_GRPC_ADDR: grpcAddress('127.0.0.1:7003').describe('host:port of the webhook service (WebhookDirectory)'),
  ...receiverAddressSettings,
  WEBHOOK_CONNECT_TIMEOUT_MS: milliseconds(5_000, 60_000).describe('Time allowed to open the TCP connection to a receiver'),
  WEBHOOK_TLS_TIMEOUT_MS: milliseconds(5_000, 60_000).describe('Time allowed for the TLS handshake with a receiver, once connected'),
  WEBHOOK_HEADERS_TIMEOUT_MS: milliseconds(10_000, 120_000).describe('Time allowed for the response headers once the request is sent (capped by WEBHOOK_TIMEOUT_MS)'),
  WEBHOOK_TIMEOUT_MS: milliseconds(15_000, 120_000).describe('Time allowed for a whole delivery attempt, connecting included'),
  DELIVERY_DNS_TIMEOUT_MS: milliseconds(5_000, 60_000).describe("Time allowed to resolve a receiver's host before an attempt"),
  DELIVERY_DNS_MAX_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400_000)
    .default(300_000)
    .describe("Receiver addresses are cached for their DNS records' TTL, at most this long (0: never cached)"),
  DELIVERY_DNS_NEGATIVE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000).describe('How long a receiver host that does not exist is remembered as such'),
  DELIVERY_DNS_CACHE_SIZE: z.coerce.number().int().min(1).max(1_000_000).default(10_000).describe('Receiver host names kept in the DNS cache'),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE.join(','))
    .transform((text, context) => {
      try {
        return parseRetrySchedule(text);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .describe('Seconds before each attempt, comma-separated: the first attempt, then each retry'),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(2_000).default(200).describe('Delivery attempts in flight at once in this replica'),
  DELIVERY_CONCURRENCY_PER_TEAM: z.coerce
    .number()
    .int()
    .min(1)
    .max(2_000)
    .default(50)
    .describe("Attempts in flight at once for one team in this replica, so one team's receivers cannot take every slot"),
  DELIVERY_CONCURRENCY_PER_WEBHOOK: z.coerce
    .number()
    .int()
    .min(1)
    .max(500)
    .default(16)
    .describe('Attempts in flight at once to one webhook, so a slow receiver cannot hold up the others'),
  DELIVERY_LAUNCHES_PER_TURN: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(DEFAULT_LAUNCHES_PER_TURN)
    .describe(
      "Delivery attempts started in one turn of the delivery pipeline's event loop at most (signing, request, connection are synchronous work); the others start in the next turns, teams taking turns, so one team's burst holds up other teams' events and attempts by a turn at most",
    ),
  DELIVERY_TEAM_CONNECTIONS_PER_SECOND: z.coerce
    .number()
    .min(0)
    .max(100_000)
    .default(DEFAULT_TEAM_CONNECTIONS_PER_SECOND)
    .describe(
      "New receiver connections one team's attempts open per second in this replica, after DELIVERY_TEAM_CONNECTIONS_BURST; an attempt past it waits its turn in its slot, so endpoints that fail together do not reconnect in one wave ahead of other teams' attempts. Attempts on kept-alive connections never wait. 0 turns pacing off",
    ),
  DELIVERY_TEAM_CONNECTIONS_BURST: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_TEAM_CONNECTIONS_BURST)
    .describe("New receiver connections one team's attempts open at once before DELIVERY_TEAM_CONNECTIONS_PER_SECOND applies"),
  DELIVERY_PIPELINE_POOL_MAX: z.coerce
    .number()
    .int()
    .min(2)
    .max(200)
    .default(10)
    .describe(
      "Connections of the pool that fans out events, sends deliveries and records attempts, apart from the delivery log API's DATABASE_POOL_MAX so requests never hold up sending",
    ),
  DELIVERY_FANOUT_PER_TEAM_PER_SECOND: z.coerce
    .number()
    .min(0)
    .max(1_000_000)
    .default(500)
    .describe(
      "Deliveries one team's events may create per second in this replica (an event to 10 webhooks counts 10); events beyond it wait in order in the fan-out backlog, stored, never dropped. 0 turns the budget off",
    ),
  DELIVERY_FANOUT_PER_TEAM_BURST: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(2_000)
    .describe("Deliveries one team's events may create at once before DELIVERY_FANOUT_PER_TEAM_PER_SECOND applies"),
  DELIVERY_FANOUT_STATEMENTS: z.coerce
    .number()
    .int()
    .min(2)
    .max(64)
    .default(3)
    .describe(
      "Fan-out statements (one team's events each) in flight at once in this replica; one team holds all of them but one at most, so another team's events never wait behind its burst.",
    ),
  DELIVERY_ORDER_WAIT_MAX_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400_000)
    .default(600_000)
    .describe(
      'How long a delivery of an issue event waits while an earlier event of the same issue to the same webhook is still pending (being retried), before it goes ahead marked out_of_order; 0: deliveries of one issue never wait for each other',
    ),
  DELIVERY_BREAKER_FAILURES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(5)
    .describe("Consecutive failed attempts (no answer, 5xx, 429) that open an endpoint's circuit breaker"),
  DELIVERY_BREAKER_COOL_DOWN_MS: milliseconds(30_000, 3_600_000).describe(
    "How long an open circuit breaker defers its endpoint's deliveries before one probe, spread by up to a fifth either way; doubled after each failed probe",
  ),
  DELIVERY_BREAKER_MAX_COOL_DOWN_MS: milliseconds(600_000, 86_400_000).describe('The longest circuit breaker cool-down'),
  DELIVERY_DEFER_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_DEFER_BATCH_SIZE)
    .describe(
      "Deliveries of circuit-broken endpoints moved to their probe time by one statement at most; more wait for the next statement, after a rest as long as the last one took, so an endpoint's large backlog is never one long write that every team's statements wait behind",
    ),
  WEBHOOK_FAILING_NOTICE_AFTER_MS: milliseconds(86_400_000, 7_776_000_000).describe(
    'How long every attempt to a webhook must have failed (since the first failure after a success) before webhook.failing is sent to the webhooks of its team that opted in; once per streak of failures',
  ),
  WEBHOOK_DISABLE_AFTER_MS: milliseconds(432_000_000, 7_776_000_000).describe(
    'How long every attempt to a webhook must have failed before it is switched off with a recorded reason and webhook.disabled is sent to the webhooks of its team that opted in',
  ),
  WEBHOOK_HEALTH_CHECK_INTERVAL_MS: milliseconds(60_000, 3_600_000).describe(
    'How often each replica looks for webhooks whose failures have lasted long enough for webhook.failing or auto-disable',
  ),
  DELIVERY_POLL_INTERVAL_MS: milliseconds(1_000, 60_000).describe('How often due retries are looked for when nothing wakes the sender'),
  DELIVERY_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(600_000)
    .optional()
    .describe("How long a claimed delivery is reserved for its attempt; default: the DNS and attempt timeouts, the longest wait for the team's pace of new connections, plus 15 s"),
  DELIVERY_RETENTION_DAYS: z.coerce.number().min(1).max(3_650).default(30).describe('How long finished deliveries and their attempts stay in the delivery log'),
  DELIVERY_RETENTION_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(100)
    .max(100_000)
    .default(5_000)
    .describe('Expired deliveries removed per statement; a retention pass runs batches back to back until none is left'),
  DELIVERY_RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(60_000)
    .describe('Pause between retention passes once the delivery log holds nothing past its retention'),
  DELIVERY_RESPONSE_EXCERPT_BYTES: z.coerce
    .number()
    .int()
    .min(256)
    .max(65_536)
    .default(4_096)
    .describe("Bytes of a receiver's answer kept with each attempt in the delivery log; the rest is never read"),
  DELIVERY_EXCHANGE_HEADERS_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(256)
    .max(65_536)
    .default(4_096)
    .describe('Bytes of header names and values kept per attempt, for the request sent and for the answer each; headers past it are counted, not kept'),
  DELIVERY_RECOVERY_MAX_EVENTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .describe('Failed events one recovery job may send again; a window holding more is refused with 422 recovery_too_large'),
  DELIVERY_RECOVERY_DEFAULT_PER_SECOND: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(10)
    .describe('Re-sends a recovery job starts per second for a webhook without a rate limit (a webhook with one is paced by it)'),
  DELIVERY_RECOVERY_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(500)
    .describe('Re-sends a recovery job creates per statement at most; a fast pace takes several a second'),
  EVENT_ACK_WAIT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(600_000)
    .default(10_000)
    .describe("How long JetStream waits for a replica to store an event's deliveries before offering it to another"),
  ...streamSettingsSchema,
  ...webhookChangesSettingsSchema,
  DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000_000)
    .default(10_000)
    .describe(
      "Webhooks the delivery pipeline keeps in memory (a team's whole part is dropped on its change notice, the least recently used teams beyond this); 0: every fan-out and attempt asks the webhook service",
    ),
  DELIVERY_WEBHOOK_CACHE_TTL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(86_400_000)
    .default(600_000)
    .describe('Longest a webhook is kept in memory without a change notice, a safety net: notices drop changed teams at once'),
  DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(1_000)
    .describe(
      'How long a cache read waits to confirm with NATS that every webhook change notice stored before it was applied; past it (or with NATS unavailable) the read asks the webhook service',
    ),
  DELIVERY_WEBHOOK_CACHE_SYNC_CHECKS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(4)
    .describe('Checks of the webhook change notices out to NATS at once; a cache read that begins while they are all out waits for one of them to end before sending its own'),
  EVENT_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(32).describe('Events fanned out at once in this replica'),
  EVENT_ACK_FLUSH_WITHIN_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000)
    .default(20)
    .describe(
      "Longest an event whose deliveries went to the sender at once, stored without waiting for PostgreSQL's WAL flush, waits for the flush that lets it be acknowledged on the bus (one flush serves every event waiting); 0: a flush at once",
    ),
  ...pagingSettings,
  ...serviceThreadSettings,
  ...idempotencySettings,
});

export type Config = z.infer<typeof configSchema>;

export const loadDeliveryConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);

/**
 * How long a claimed delivery stays reserved for its attempt: DELIVERY_LEASE_MS, or enough for the
 * longest attempt. That is the DNS and attempt timeouts, the longest wait for the team's pace of
 * new connections (every other attempt of the team in this replica waiting ahead of it), and 15 s.
 */
export function deliveryLeaseMs(config: Config): number {
  if (config.DELIVERY_LEASE_MS !== undefined) return config.DELIVERY_LEASE_MS;
  const pacedAhead = Math.max(0, config.DELIVERY_CONCURRENCY_PER_TEAM - config.DELIVERY_TEAM_CONNECTIONS_BURST);
  const longestPaceMs = config.DELIVERY_TEAM_CONNECTIONS_PER_SECOND > 0 ? Math.ceil((pacedAhead / config.DELIVERY_TEAM_CONNECTIONS_PER_SECOND) * 1000) : 0;
  return config.DELIVERY_DNS_TIMEOUT_MS + config.WEBHOOK_TIMEOUT_MS + longestPaceMs + 15_000;
}
