import { ConfigError } from '@worklane/config';
import { signingKeyPair } from '@worklane/testing';
import { deliveryLeaseMs, loadDeliveryConfig } from './config';

const required = {
  DATABASE_URL: 'postgres://localhost/worklane',
  NATS_URL: 'nats://127.0.0.1:4222',
  SIGNING_PRIVATE_KEY: signingKeyPair().privateKey,
  GATEWAY_PUBLIC_KEY: signingKeyPair().publicKey,
  CONSOLE_PUBLIC_KEY: signingKeyPair().publicKey,
};

const problemsOf = (env: Record<string, string>) => {
  try {
    loadDeliveryConfig({ ...required, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('delivery configuration', () => {
  it('defaults to the retry schedule, timeouts and ports that docs/webhooks.md and docs/architecture.md state', () => {
    const config = loadDeliveryConfig(required);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(config.WEBHOOK_CONNECT_TIMEOUT_MS).toBe(5_000);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(config.HTTP_PORT).toBe(8084);
    expect(config.WEBHOOK_ALLOWED_CIDRS.isEmpty).toBe(true);
    expect(config.WEBHOOK_DNS_SERVERS).toEqual([]);
  });

  it('defaults the fair-delivery budgets, attempt timeouts, circuit breaker and DNS cache as documented', () => {
    const config = loadDeliveryConfig(required);
    expect(config).toMatchObject({
      DELIVERY_CONCURRENCY: 200,
      DELIVERY_CONCURRENCY_PER_TEAM: 50,
      DELIVERY_CONCURRENCY_PER_WEBHOOK: 16,
      WEBHOOK_TLS_TIMEOUT_MS: 5_000,
      WEBHOOK_HEADERS_TIMEOUT_MS: 10_000,
      DELIVERY_BREAKER_FAILURES: 5,
      DELIVERY_BREAKER_COOL_DOWN_MS: 30_000,
      DELIVERY_BREAKER_MAX_COOL_DOWN_MS: 600_000,
      DELIVERY_DNS_TIMEOUT_MS: 5_000,
      DELIVERY_DNS_MAX_TTL_MS: 300_000,
      DELIVERY_DNS_NEGATIVE_TTL_MS: 5_000,
      DELIVERY_DNS_CACHE_SIZE: 10_000,
    });
    expect(problemsOf({ DELIVERY_CONCURRENCY_PER_TEAM: '0' })[0]).toMatch(/^DELIVERY_CONCURRENCY_PER_TEAM:/);
  });

  it('starts 8 attempts per turn of the event loop unless told otherwise, at least 1', () => {
    expect(loadDeliveryConfig(required).DELIVERY_LAUNCHES_PER_TURN).toBe(8);
    expect(loadDeliveryConfig({ ...required, DELIVERY_LAUNCHES_PER_TURN: '32' }).DELIVERY_LAUNCHES_PER_TURN).toBe(32);
    expect(problemsOf({ DELIVERY_LAUNCHES_PER_TURN: '0' })[0]).toMatch(/^DELIVERY_LAUNCHES_PER_TURN:/);
  });

  it("paces a team's new connections at 50 a second after 10 at once unless told otherwise; 0 turns pacing off", () => {
    const defaults = loadDeliveryConfig(required);
    expect([defaults.DELIVERY_TEAM_CONNECTIONS_PER_SECOND, defaults.DELIVERY_TEAM_CONNECTIONS_BURST]).toEqual([50, 10]);
    const set = loadDeliveryConfig({ ...required, DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '0.5', DELIVERY_TEAM_CONNECTIONS_BURST: '3' });
    expect([set.DELIVERY_TEAM_CONNECTIONS_PER_SECOND, set.DELIVERY_TEAM_CONNECTIONS_BURST]).toEqual([0.5, 3]);
    expect(loadDeliveryConfig({ ...required, DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '0' }).DELIVERY_TEAM_CONNECTIONS_PER_SECOND).toBe(0);
    expect(problemsOf({ DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '-1' })[0]).toMatch(/^DELIVERY_TEAM_CONNECTIONS_PER_SECOND:/);
    expect(problemsOf({ DELIVERY_TEAM_CONNECTIONS_BURST: '0' })[0]).toMatch(/^DELIVERY_TEAM_CONNECTIONS_BURST:/);
  });

  it("reserves a claimed delivery for the longest attempt, its wait for the team's connection pace included, unless DELIVERY_LEASE_MS says", () => {
    // DNS 5 s + attempt 15 s + (50 - 10) connections ahead at 50 a second (0.8 s) + 15 s.
    expect(deliveryLeaseMs(loadDeliveryConfig(required))).toBe(35_800);
    expect(deliveryLeaseMs(loadDeliveryConfig({ ...required, DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '0' }))).toBe(35_000);
    expect(deliveryLeaseMs(loadDeliveryConfig({ ...required, DELIVERY_TEAM_CONNECTIONS_PER_SECOND: '2', DELIVERY_TEAM_CONNECTIONS_BURST: '60' }))).toBe(35_000);
    expect(deliveryLeaseMs(loadDeliveryConfig({ ...required, DELIVERY_LEASE_MS: '60000' }))).toBe(60_000);
  });

  it('reads an operator schedule, allowed ranges and DNS servers', () => {
    const config = loadDeliveryConfig({ ...required, WEBHOOK_RETRY_SCHEDULE: '0, 10, 60', WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8', WEBHOOK_DNS_SERVERS: '10.0.0.2:53' });
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 10, 60]);
    expect(config.WEBHOOK_ALLOWED_CIDRS.includes('10.1.2.3')).toBe(true);
    expect(config.WEBHOOK_DNS_SERVERS).toEqual(['10.0.0.2:53']);
  });

  it('refuses bad values with a message naming the variable', () => {
    expect(problemsOf({ WEBHOOK_RETRY_SCHEDULE: '5m,1h' })[0]).toMatch(/^WEBHOOK_RETRY_SCHEDULE: .*seconds/);
    expect(problemsOf({ WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/33' })[0]).toMatch(/^WEBHOOK_ALLOWED_CIDRS: not a CIDR range/);
    expect(problemsOf({ WEBHOOK_TIMEOUT_MS: '0' })[0]).toMatch(/^WEBHOOK_TIMEOUT_MS:/);
    expect(problemsOf({ NATS_URL: '' })[0]).toMatch(/^NATS_URL:/);
  });
});
