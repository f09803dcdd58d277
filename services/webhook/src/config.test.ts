import { ConfigError } from '@worklane/config';
import { signingKeyPair } from '@worklane/testing';
import { loadWebhookConfig } from './config';

const REQUIRED = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/worklane',
  GATEWAY_PUBLIC_KEY: signingKeyPair().publicKey,
  CONSOLE_PUBLIC_KEY: signingKeyPair().publicKey,
  DELIVERY_PUBLIC_KEY: signingKeyPair().publicKey,
  WEBHOOK_SECRET_KEY: 'w'.repeat(32),
  NATS_URL: 'nats://127.0.0.1:4222',
};

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadWebhookConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a configuration error');
};

describe('webhook service configuration', () => {
  it('has defaults for everything but the database, NATS and the keys', () => {
    const config = loadWebhookConfig(REQUIRED);
    expect(config).toMatchObject({ HTTP_PORT: 8082, GRPC_PORT: 7003, DATABASE_SCHEMA: 'webhook', WEBHOOK_PREVIOUS_SECRET_KEYS: [], WEBHOOK_DNS_SERVERS: [] });
    expect(config.WEBHOOK_ALLOWED_CIDRS.isEmpty).toBe(true);
    const { NATS_URL: _nats, ...withoutNats } = REQUIRED;
    expect(problemsOf(withoutNats)).toEqual([expect.stringMatching(/^NATS_URL: /)]);
  });

  it('parses allowed ranges and previous keys', () => {
    const config = loadWebhookConfig({ ...REQUIRED, WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8', WEBHOOK_PREVIOUS_SECRET_KEYS: `${'a'.repeat(32)},${'b'.repeat(40)}` });
    expect(config.WEBHOOK_ALLOWED_CIDRS.includes('10.1.2.3')).toBe(true);
    expect(config.WEBHOOK_PREVIOUS_SECRET_KEYS).toEqual(['a'.repeat(32), 'b'.repeat(40)]);
  });

  it('names every bad variable', () => {
    const problems = problemsOf({ ...REQUIRED, WEBHOOK_SECRET_KEY: 'short', WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/33', WEBHOOK_PREVIOUS_SECRET_KEYS: 'short' });
    expect(problems).toEqual([
      expect.stringMatching(/^WEBHOOK_SECRET_KEY: /),
      expect.stringMatching(/^WEBHOOK_PREVIOUS_SECRET_KEYS\.0: /),
      expect.stringMatching(/^WEBHOOK_ALLOWED_CIDRS: not a CIDR range/),
    ]);
  });

  it('bounds secret rotations and rate limits, defaults first', () => {
    expect(loadWebhookConfig(REQUIRED)).toMatchObject({
      WEBHOOK_PREVIOUS_SECRETS_MAX: 5,
      WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: 86_400,
      WEBHOOK_SECRET_OVERLAP_MAX_SECONDS: 604_800,
      WEBHOOK_RATE_LIMIT_MAX_PER_SECOND: 1_000,
      WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS: 5_000,
      WEBHOOK_CHANGES_REPLICAS: 1,
      WEBHOOK_CHANGES_MAX_AGE_SECONDS: 3_600,
    });
    expect(problemsOf({ ...REQUIRED, WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: '7200', WEBHOOK_SECRET_OVERLAP_MAX_SECONDS: '3600' })).toEqual([
      'WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: 7200 exceeds WEBHOOK_SECRET_OVERLAP_MAX_SECONDS (3600)',
    ]);
    expect(problemsOf({ ...REQUIRED, WEBHOOK_PREVIOUS_SECRETS_MAX: '0' })).toEqual([expect.stringMatching(/^WEBHOOK_PREVIOUS_SECRETS_MAX: /)]);
  });
});
