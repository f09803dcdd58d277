import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('README configuration reference', () => {
  it('lists every variable the services’ configuration schemas accept, as they describe it', () => {
    const check = spawnSync(process.execPath, [join(__dirname, '..', 'src', 'config-reference.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
