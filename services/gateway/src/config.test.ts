import { ConfigError } from '@worklane/config';
import { loadGatewayConfig } from './config';

const base = { TOKEN_SERVICE_ADDR: '127.0.0.1:7001', IDENTITY_SIGNING_KEY: 'k'.repeat(32) };

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
    for (const name of ['TOKEN_SERVICE_ADDR', 'WEBHOOK_SERVICE_URL', 'IDENTITY_SIGNING_KEY', 'RATE_LIMIT_PER_SECOND']) expect(load).toThrow(name);
  });
});
