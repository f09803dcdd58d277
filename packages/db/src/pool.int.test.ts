// Every pooled session starts with the settings createPool gives it, against the real PostgreSQL
// that `npm test` starts (DATABASE_URL).
import { createPool, type Pool } from './pool';

const url = process.env.DATABASE_URL;

describe('createPool sessions', () => {
  beforeAll(() => {
    if (!url) throw new Error('DATABASE_URL is not set: run the tests through `npm test`, which starts PostgreSQL');
  });

  const pools: Pool[] = [];
  const pool = (settings?: Record<string, string>) => {
    const created = createPool({ url: url as string, schema: 'public', max: 1, applicationName: 'pool-test', ...(settings ? { settings } : {}) });
    pools.push(created);
    return created;
  };
  const show = async (db: Pool, name: string) => (await db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name];

  afterAll(async () => {
    await Promise.all(pools.map((created) => created.end()));
  });

  it('runs without JIT compilation, whatever the server default', async () => {
    expect(await show(pool(), 'jit')).toBe('off');
  });

  it('applies the settings it is given, which may override the defaults', async () => {
    const db = pool({ synchronous_commit: 'off', jit: 'on' });
    expect(await show(db, 'synchronous_commit')).toBe('off');
    expect(await show(db, 'jit')).toBe('on');
    expect(await show(db, 'search_path')).toBe('public');
  });
});
