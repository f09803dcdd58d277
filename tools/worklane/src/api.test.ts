import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// The CLI calls the API only through the client generated from the OpenAPI document: no module
// but api.ts makes HTTP requests or writes API paths of its own.
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the CLI and the API', () => {
  const src = __dirname;

  it('calls the API through @worklane/api-client only', () => {
    const api = readFileSync(join(src, 'api.ts'), 'utf8');
    expect(api).toMatch(/import \{[^}]*\bcreateApiClient\b[^}]*\} from '@worklane\/api-client'/);
    for (const file of sources(src)) {
      const text = readFileSync(file, 'utf8');
      const name = relative(src, file);
      expect([name, /\/api\/v1/.test(text)]).toEqual([name, false]);
      expect([name, /'(node:)?(http|https|undici)'/.test(text)]).toEqual([name, false]);
      if (name !== 'api.ts') expect([name, /\bfetch\(/.test(text)]).toEqual([name, false]);
    }
  });
});
