// No import cycles in the repository: between the modules of any workspace package, type-only
// imports included, and between the workspace packages themselves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, test } from '@jest/globals';

import { cyclesOf, importCycles, moduleGraph } from '../src/import-cycles.mjs';

describe('import cycles', () => {
  test('there are none in the repository', () => {
    expect(importCycles()).toEqual({ modules: [], packages: [] });
  });

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-cycles-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    fs.writeFileSync(path.join(scratch, file), text);
  };

  test('a cycle through a type-only import is found, an import in a comment is not', () => {
    write('src/app.ts', "import { mount } from './routes/team';\nexport interface Deps { a: number }\n");
    write('src/routes/team.ts', "import type { Deps } from '../app';\n// import { x } from '../other';\nexport const mount = (d: Deps) => d;\n");
    write('src/other.ts', "import { mount } from './routes/team';\n");
    const cycles = cyclesOf(moduleGraph(scratch)).map((cycle) => cycle.map((file) => path.relative(scratch, file)));
    expect(cycles).toEqual([['src/app.ts', 'src/routes/team.ts']]);
  });

  test('finds cycles of any length', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c']]);
  });
});
