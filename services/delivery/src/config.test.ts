import { ConfigError } from '@worklane/config';
import { loadDeliveryConfig } from './config';

const required = { DATABASE_URL: 'postgres://localhost/worklane', NATS_URL: 'nats://127.0.0.1:4222', IDENTITY_SIGNING_KEY: 'k'.repeat(32) };

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
  it('defaults to the retry schedule, timeouts and ports of DESIGN.md and docs/architecture.md', () => {
    const config = loadDeliveryConfig(required);
    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(config.WEBHOOK_CONNECT_TIMEOUT_MS).toBe(5_000);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(config.HTTP_PORT).toBe(8084);
    expect(config.WEBHOOK_ALLOWED_CIDRS.isEmpty).toBe(true);
    expect(config.WEBHOOK_DNS_SERVERS).toEqual([]);
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
