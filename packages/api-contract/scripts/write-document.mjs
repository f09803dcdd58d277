// Writes dist/openapi.json from the built schemas, and dist/reference.html: the API reference
// page (Redoc, rendered by @redocly/cli with its scripts inlined, so it needs nothing from the
// network and sends nothing to it). Run by `npm run build`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist');
const require = createRequire(import.meta.url);
const { buildOpenApiDocument } = require(path.join(dist, 'index.js'));

const documentPath = path.join(dist, 'openapi.json');
fs.writeFileSync(documentPath, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);

const redocly = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
// Quiet unless it fails: the renderer prints a banner on every run.
const rendered = spawnSync(
  process.execPath,
  [redocly, 'build-docs', documentPath, '--inlineBundle', '--title', 'Worklane API reference', '--openapi.disableTelemetry=true', '--output', path.join(dist, 'reference.html')],
  { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
);
if (rendered.status !== 0) {
  process.stderr.write(`${rendered.stdout}${rendered.stderr}`);
  throw new Error(`redocly build-docs failed (exit ${rendered.status})`);
}
