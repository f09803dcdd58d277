import { baseServiceSchema, flag, grpcAddress, loadConfig, port, privateSigningKey, unavailableSettings, z } from '@worklane/config';

const serviceUrl = (service: string) => z.url().describe(`Base URL of the ${service} service's HTTP API`);

export const configSchema = z.object({
  ...baseServiceSchema('console'),
  ...unavailableSettings,
  HTTP_PORT: port(8085).describe('HTTP port of the web console, /healthz and /readyz (metrics: METRICS_PORT)'),
  SIGNING_PRIVATE_KEY: privateSigningKey().describe(
    "This service's own Ed25519 private key (PKCS#8 PEM): signs its gRPC calls and, on the gateway and console, the caller identities they forward; no other service holds it",
  ),
  TOKEN_SERVICE_ADDR: grpcAddress().describe('host:port of the token gRPC service (accounts, sessions, API tokens)'),
  PROJECT_SERVICE_URL: serviceUrl('project'),
  WEBHOOK_SERVICE_URL: serviceUrl('webhook'),
  ISSUE_SERVICE_URL: serviceUrl('issue'),
  DELIVERY_SERVICE_URL: serviceUrl('delivery'),
  CONSOLE_SIGNUP_ENABLED: flag(false).describe('Let visitors create an account and a team from the sign-in page'),
  CONSOLE_SECURE_COOKIES: flag(false).describe('Mark the session cookie Secure even when the request did not arrive over HTTPS'),
  CONSOLE_TRUST_PROXY: z
    .string()
    .default('')
    .transform((value): false | number | string[] => {
      const trimmed = value.trim();
      if (trimmed === '' || trimmed === 'false') return false;
      if (/^\d+$/.test(trimmed)) return Number(trimmed);
      return trimmed
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
    })
    .describe(
      "Proxies whose X-Forwarded-For/-Proto name the client (express 'trust proxy'): empty trusts none and takes the client address from the socket; a number trusts that many hops (1: the gateway, which appends the address it saw; 2: the gateway behind an ingress); or addresses and subnets, comma-separated",
    ),
  CONSOLE_LOGIN_WINDOW_SECONDS: z.coerce.number().int().positive().max(86_400).default(900).describe('Window over which failed sign-in attempts are counted (at most a day)'),
  CONSOLE_LOGIN_MAX_PER_EMAIL: z.coerce
    .number()
    .int()
    .positive()
    .default(5)
    .describe('Failed sign-ins allowed per account (email address, case-insensitive) within the window, for all console replicas together; past it 429 with Retry-After'),
  CONSOLE_LOGIN_MAX_PER_IP: z.coerce
    .number()
    .int()
    .positive()
    .default(20)
    .describe('Failed sign-ins allowed per client address within the window, for all console replicas together; past it 429 with Retry-After'),
});

export type Config = z.infer<typeof configSchema>;

export const loadConsoleConfig = (env?: Record<string, string | undefined>) => loadConfig(configSchema, env);
