import { generateKeyPairSync } from 'node:crypto';
import { ConfigError } from '@worklane/config';
import { signingKeyPair } from '@worklane/testing';
import { loadGatewayConfig } from './config';

const base = { TOKEN_SERVICE_ADDR: '127.0.0.1:7001', SIGNING_PRIVATE_KEY: signingKeyPair().privateKey };

describe('gateway configuration', () => {
  it('has a generous per-token rate limit by default', () => {
    const config = loadGatewayConfig(base);
    expect(config.RATE_LIMIT_PER_SECOND).toBe(100);
    expect(config.RATE_LIMIT_BURST).toBe(200);
    expect(config.HTTP_PORT).toBe(8080);
  });

  it('treats an empty service URL as a service the gateway runs without', () => {
    const config = loadGatewayConfig({ ...base, PROJECT_SERVICE_URL: 'http://project:8081', ISSUE_SERVICE_URL: '' });
    expect(config.PROJECT_SERVICE_URL).toBe('http://project:8081');
    expect(config.ISSUE_SERVICE_URL).toBeUndefined();
  });

  it('names each bad variable', () => {
    const load = () => loadGatewayConfig({ TOKEN_SERVICE_ADDR: 'no-port', WEBHOOK_SERVICE_URL: 'ftp://x', RATE_LIMIT_PER_SECOND: '-1' });
    expect(load).toThrow(ConfigError);
    for (const name of ['TOKEN_SERVICE_ADDR', 'WEBHOOK_SERVICE_URL', 'SIGNING_PRIVATE_KEY', 'RATE_LIMIT_PER_SECOND']) expect(load).toThrow(name);
  });

  it('takes its own Ed25519 private key, and refuses a public key or another kind of key in its place', () => {
    expect(loadGatewayConfig(base).SIGNING_PRIVATE_KEY.asymmetricKeyType).toBe('ed25519');
    // As an environment variable may carry it: line breaks written as \n.
    expect(loadGatewayConfig({ ...base, SIGNING_PRIVATE_KEY: base.SIGNING_PRIVATE_KEY.replace(/\n/g, '\\n') }).SIGNING_PRIVATE_KEY.asymmetricKeyType).toBe('ed25519');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    for (const bad of [signingKeyPair().publicKey, rsa, 'k'.repeat(64)]) {
      expect(() => loadGatewayConfig({ ...base, SIGNING_PRIVATE_KEY: bad })).toThrow(/SIGNING_PRIVATE_KEY: must be an Ed25519 private key/);
    }
  });
});
