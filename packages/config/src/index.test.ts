import { ConfigError, baseServiceSchema, flag, list, loadConfig, port, z } from './index';

describe('loadConfig', () => {
  const schema = z.object({ ...baseServiceSchema('project'), HTTP_PORT: port(8081), ENABLED: flag(false), CIDRS: list() });

  it('applies defaults and coerces types', () => {
    const config = loadConfig(schema, {});
    expect(config).toMatchObject({ HTTP_PORT: 8081, ENABLED: false, CIDRS: [], OTEL_SERVICE_NAME: 'project', LOG_LEVEL: 'info' });
  });

  it('parses lists and flags', () => {
    const config = loadConfig(schema, { ENABLED: 'true', CIDRS: '10.0.0.0/8, ,192.168.0.0/16' });
    expect(config.ENABLED).toBe(true);
    expect(config.CIDRS).toEqual(['10.0.0.0/8', '192.168.0.0/16']);
  });

  it('names every invalid variable', () => {
    expect(() => loadConfig(schema, { HTTP_PORT: 'eighty', ENABLED: 'maybe' })).toThrow(ConfigError);
    try {
      loadConfig(schema, { HTTP_PORT: 'eighty', ENABLED: 'maybe' });
    } catch (error) {
      expect((error as ConfigError).problems.map((problem) => problem.split(':')[0])).toEqual(['HTTP_PORT', 'ENABLED']);
    }
  });
});
