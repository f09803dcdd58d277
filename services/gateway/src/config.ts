import { baseServiceSchema, grpcAddress, loadConfig, port, privateSigningKey, unavailableSettings, z } from '@worklane/config';

/**
 * An upstream's base URL. Unset or empty means the gateway runs without that service: its routes
 * answer 503. The gateway's readiness never depends on an upstream.
 */
const serviceUrl = (name: string) =>
  z
    .preprocess((value) => (value === '' ? undefined : value), z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional())
    .describe(`Base URL of the ${name} service; empty to run without it`);

export const configSchema = z.object({
  ...baseServiceSchema('gateway'),
  ...unavailableSettings,
  HTTP_PORT: port(8080).describe('Public HTTP port: the API under /api/v1, the console elsewhere, /healthz, /readyz (metrics: METRICS_PORT)'),
  TOKEN_SERVICE_ADDR: grpcAddress().describe('host:port of the token gRPC service that authenticates every API request'),
  PROJECT_SERVICE_URL: serviceUrl('project'),
  WEBHOOK_SERVICE_URL: serviceUrl('webhook'),
  ISSUE_SERVICE_URL: serviceUrl('issue'),
  DELIVERY_SERVICE_URL: serviceUrl('delivery'),
  CONSOLE_SERVICE_URL: serviceUrl('console (everything outside /api)'),
  SIGNING_PRIVATE_KEY: privateSigningKey().describe(
    "This service's own Ed25519 private key (PKCS#8 PEM): signs its gRPC calls and, on the gateway and console, the caller identities they forward; no other service holds it",
  ),
  RATE_LIMIT_PER_SECOND: z.coerce
    .number()
    .min(0)
    .default(100)
    .describe('Sustained API requests per second allowed per token, all gateway replicas together (RATE_LIMIT_SYNC_INTERVAL_MS); 0 turns rate limiting off'),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200).describe('Requests a token may make at once before the sustained rate applies'),
  RATE_LIMIT_TEAM_PER_SECOND: z.coerce
    .number()
    .min(0)
    .default(100)
    .describe("Sustained API requests per second allowed per team, all of the team's tokens and all gateway replicas together; 0 turns the team limit off"),
  RATE_LIMIT_TEAM_BURST: z.coerce.number().int().min(1).default(200).describe('Requests a team may make at once before its sustained rate applies'),
  RATE_LIMIT_RESPONSE_UNIT_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(65_536)
    .describe(
      'A response counts against the token and team rates as one request per started this many bytes of its body, so large pages spend the allowance faster; 0 counts every response as one',
    ),
  RATE_LIMIT_REFUSAL_DELAY_MAX_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(1_000)
    .describe(
      'A 429 is answered when the allowance has room again, at most this many milliseconds later, so clients that retry at once are slowed instead of answered thousands of times a second; 0 answers at once',
    ),
  RATE_LIMIT_REFUSALS_HELD_MAX: z.coerce
    .number()
    .int()
    .min(0)
    .default(1_000)
    .describe('Most 429s held back at once on a replica (RATE_LIMIT_REFUSAL_DELAY_MAX_MS); beyond it refusals are answered at once'),
  RATE_LIMIT_SYNC_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(200)
    .describe(
      'How often each replica sends the token service what each token and team spent on it and takes back the level all replicas share; requests are still decided locally. Replicas together overshoot a rate by at most what they allow in one interval. 0 keeps the limits per replica',
    ),
  RATE_LIMIT_SYNC_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(30_000)
    .default(1_000)
    .describe('Deadline of one rate-limit sync call; a sync that fails leaves the replica limiting on its own until the next one succeeds'),
  GATEWAY_AUTH_CACHE_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(60_000)
    .describe(
      "Longest this replica reuses a successful token check. While it follows the token service's change feed (GATEWAY_TOKEN_CHANGES_INTERVAL_MS) a revoked or moved token is dropped at once whatever this is; otherwise the token service's lease caps it (TOKEN_CACHE_MAX_TTL_MS). 0 asks the token service on every request",
    ),
  GATEWAY_TOKEN_CHANGES_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(5_000)
    .default(200)
    .describe(
      "How often this replica reads the token service's feed of revoked and moved tokens, which lets it keep token checks for GATEWAY_AUTH_CACHE_TTL_MS; keep it well under the feed's lease (TOKEN_CHANGES_LEASE_MS), past which the cache is not trusted. 0 does not follow the feed: checks are kept only for the token service's lease per token",
    ),
  AUTHENTICATE_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(2_000).describe('Deadline of the token service call; past it the request gets 503'),
  UPSTREAM_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(30_000)
    .describe('Longest wait for a service to answer a proxied request; past it the request gets 503'),
  UPSTREAM_IDLE_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(4_000)
    .describe(
      "How long a kept-alive connection to a service may wait unused before the gateway closes it; below the services' SHUTDOWN_DRAIN_MS, so a service that is stopping never closes a connection under a request the gateway is sending",
    ),
  REQUEST_BODY_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(1_048_576)
    .default(1_048_576)
    .describe('Largest API request body in bytes; a larger one is refused with 413 before it is read. At most 1 MiB, what the services take'),
});

export type Config = z.infer<typeof configSchema>;

export const loadGatewayConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);
