#!/usr/bin/env node
// `npx worklane ...`: runs the compiled CLI (tools/worklane/dist) on Node 24. In a clone on another
// Node it goes through the repository's one provisioning path (tools/dev/src/provision), which
// re-executes it under Node 24; the images run Node 24 already.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, '..', 'dist', 'main.js');

if (Number(process.versions.node.split('.')[0]) !== 24) {
  const { useProjectNode } = await import('../../dev/src/provision/node.mjs');
  await useProjectNode();
}

if (!existsSync(main)) {
  process.stderr.write('worklane: the CLI is not built yet: run `npm run build` (or `npx turbo run build --filter=@worklane/cli...`).\n');
  process.exit(1);
}
createRequire(import.meta.url)(main);
