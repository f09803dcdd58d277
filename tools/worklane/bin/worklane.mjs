#!/usr/bin/env node
// `npx worklane ...`: runs the compiled CLI (tools/worklane/dist) on Node 22 or newer, using the
// repository's own Node (the `node` devDependency) when the machine's is older.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..', '..');
const main = join(here, '..', 'dist', 'main.js');

if (Number(process.versions.node.split('.')[0]) < 22) {
  const node = join(repoRoot, 'node_modules', '.bin', 'node');
  if (!existsSync(node)) {
    process.stderr.write(`worklane: Node ${process.versions.node} is too old (24 needed) and ${node} is missing: run \`npm ci\` first.\n`);
    process.exit(1);
  }
  const result = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

if (!existsSync(main)) {
  process.stderr.write('worklane: the CLI is not built yet: run `npm run build` (or `npx turbo run build --filter=@worklane/cli...`).\n');
  process.exit(1);
}
createRequire(import.meta.url)(main);
