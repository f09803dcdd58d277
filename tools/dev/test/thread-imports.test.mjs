// The service threads that must stay light do not load clients they never use. Each thread holds
// its own copy of every module it imports (docs/performance.md, "Memory"), so one barrel import in
// the wrong place puts megabytes of a library's code and data on a thread's heap.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, test } from '@jest/globals';

import { packagesLoadedBy, threadEntries, valueImports } from '../src/thread-imports.mjs';

const NATS = ['@nats-io/jetstream', '@nats-io/transport-node'];

/** Thread entry -> packages it must not load, and why. */
const KEPT_OUT = [
  ['services/delivery/src/main.ts', ['undici', ...NATS], 'the delivery log API sends nothing and reads no stream: the pipeline thread does'],
  ['services/delivery/src/pipeline-thread/main.ts', ['express'], 'the pipeline serves no HTTP'],
  ['services/issue/src/main.ts', NATS, 'the issue API writes the outbox: the relay thread publishes'],
  ['services/issue/src/relay-thread/main.ts', ['express', '@grpc/grpc-js', 'undici'], 'the relay only reads the outbox and publishes'],
  ['services/webhook/src/main.ts', ['undici'], 'the webhook service checks receiver addresses but never calls them'],
];

describe('packages each service thread loads', () => {
  test('every thread entry resolves, through the exports of each workspace package it reaches', () => {
    const entries = threadEntries();
    expect(entries).toEqual(expect.arrayContaining(KEPT_OUT.map(([entry]) => entry)));
    for (const entry of entries) expect(packagesLoadedBy(entry).length).toBeGreaterThan(0);
  });

  test.each(KEPT_OUT)('%s loads none of %j (%s)', (entry, keptOut) => {
    const loaded = packagesLoadedBy(entry);
    expect(loaded).toContain('pg');
    expect(loaded.filter((name) => keptOut.includes(name))).toEqual([]);
  });
});

describe('valueImports', () => {
  test('leaves out type-only imports and exports, keeps every other form', () => {
    const source = [
      "import type { A } from 'types-only';",
      "import { type B, type C } from 'inline-types-only';",
      "import { type D, e } from 'mixed';",
      "import f from 'default';",
      "import * as g from 'namespace';",
      "import 'side-effect';",
      "export { h } from 'reexport';",
      "export type { I } from 'reexported-type';",
      "const j = require('required');",
      "// import { k } from 'in-a-comment';",
    ].join('\n');
    expect(valueImports(source)).toEqual(['mixed', 'default', 'namespace', 'side-effect', 'reexport', 'required']);
  });

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-threads-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
  // Written as folder + file, so that the repository's citation check does not take these scratch
  // files for repository paths.
  const service = (file) => path.join('services', 'api', file);
  const library = (file) => path.join('packages', 'lib', file);
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    fs.writeFileSync(path.join(scratch, file), text);
  };

  test('follows a subpath export to its module alone, and refuses a subpath the package does not export', () => {
    write('package.json', JSON.stringify({ name: 'root', workspaces: ['packages/*', 'services/*'] }));
    const exportsOf = (...subpaths) => Object.fromEntries(['.', ...subpaths].map((s) => [s, { default: `./dist/${s === '.' ? 'index' : s.slice(2)}.js` }]));
    write(library('package.json'), JSON.stringify({ name: '@x/lib', exports: exportsOf('./light') }));
    write(library('src/index.ts'), "export * from './light';\nexport { heavy } from './heavy';\n");
    write(library('src/light.ts'), 'export const light = 1;\n');
    write(library('src/heavy.ts'), "import { Client } from 'heavy-client';\nexport const heavy = Client;\n");
    write(service('package.json'), JSON.stringify({ name: '@x/api' }));
    write(service('src/main.ts'), "import { light } from '@x/lib/light';\nimport pg from 'pg';\n");
    write(service('src/worker-thread/main.ts'), "import { heavy } from '@x/lib';\n");
    expect(threadEntries(scratch)).toEqual([service('src/main.ts'), service('src/worker-thread/main.ts')]);
    expect(packagesLoadedBy(service('src/main.ts'), scratch)).toEqual(['pg']);
    expect(packagesLoadedBy(service('src/worker-thread/main.ts'), scratch)).toEqual(['heavy-client']);
    write(service('src/main.ts'), "import { heavy } from '@x/lib/heavy';\n");
    expect(() => packagesLoadedBy(service('src/main.ts'), scratch)).toThrow(`${service('src/main.ts')}: @x/lib/heavy is not among @x/lib's exports`);
  });
});
