import { configSchema } from './config';

describe('REQUEST_BODY_MAX_BYTES', () => {
  const setting = configSchema.shape.REQUEST_BODY_MAX_BYTES;

  it('defaults to 1 MiB and may be lowered', () => {
    expect(setting.parse(undefined)).toBe(1024 * 1024);
    expect(setting.parse('65536')).toBe(65_536);
  });

  it('may not exceed the 1 MiB that the services take', () => {
    expect(setting.safeParse(String(1024 * 1024 + 1)).success).toBe(false);
  });
});
