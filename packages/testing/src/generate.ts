// The files generated from the service table (@worklane/config's service-table.ts), for the
// readers that cannot import TypeScript: the docs, Helm and docker buildx bake.
//   node packages/testing/dist/generate.js            lists the stale files (exit 1 if any)
//   node packages/testing/dist/generate.js --write    rewrites them
//   (`npm run generate -w @worklane/testing`, after a build; service-table.test.ts fails when
//   one of them is stale)
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES } from '@worklane/config';

import { CHART_CATALOG, renderChartCatalog } from './chart-catalog';
import { repoRoot } from './repo';
import { ARCHITECTURE_DOC, updatedArchitectureDoc } from './service-table-doc';

export const BAKE_FILE = 'docker-bake.hcl';

/**
 * docker-bake.hcl with the default group and the service matrix listing the table's services (the
 * SERVICE build argument; each image is named after its service, which the chart tests check).
 */
export function updatedBakeFile(text: string): string {
  const images = `[${SERVICES.map((service) => JSON.stringify(service.name)).join(', ')}]`;
  const group = /(group "default" \{\s*targets\s*=\s*)\[[^\]]*\]/;
  const matrix = /(matrix\s*=\s*\{\s*svc\s*=\s*)\[[^\]]*\]/;
  if (!group.test(text) || !matrix.test(text)) throw new Error(`${BAKE_FILE} lacks the default group's targets or the service matrix`);
  return text.replace(group, `$1${images}`).replace(matrix, `$1${images}`);
}

export const VALUES_SCHEMA = 'charts/worklane/values.schema.json';

/**
 * values.schema.json with a property for every service of the table, so that each service's own
 * values block (which overrides `serviceDefaults`) is accepted and checked: a service that lacks one
 * gets the shared definition for its kind (`databaseService` or `statelessService`), written before
 * the first service's property. A property written by hand (issue and delivery add settings of
 * their own) is kept as it is.
 */
export function updatedValuesSchema(text: string): string {
  const properties = (JSON.parse(text) as { properties: Record<string, unknown> }).properties;
  const missing = SERVICES.filter((service) => !(service.name in properties));
  if (missing.length === 0) return text;
  const first = SERVICES.find((service) => service.name in properties);
  const anchor = first ? text.indexOf(`\n    ${JSON.stringify(first.name)}: {`) : -1;
  if (anchor < 0) throw new Error(`${VALUES_SCHEMA} has no property of a service of the table to write the missing ones next to`);
  const lines = missing.map((service) => {
    const kind = service.schema !== null ? 'databaseService' : 'statelessService';
    return `\n    ${JSON.stringify(service.name)}: {\n      "$ref": "#/$defs/${kind}"\n    },`;
  });
  return text.slice(0, anchor) + lines.join('') + text.slice(anchor);
}

export interface GeneratedFile {
  /** Path from the repository root. */
  file: string;
  /** The file's text as it should be, given its current text. */
  update: (current: string) => string;
}

export const GENERATED_FILES: readonly GeneratedFile[] = [
  { file: ARCHITECTURE_DOC, update: updatedArchitectureDoc },
  { file: CHART_CATALOG, update: () => renderChartCatalog() },
  { file: BAKE_FILE, update: updatedBakeFile },
  { file: VALUES_SCHEMA, update: updatedValuesSchema },
];

const read = (file: string) => fs.readFileSync(path.join(repoRoot(), file), 'utf8');

/** The generated files whose text differs from what the table gives. */
export function staleFiles(): string[] {
  return GENERATED_FILES.filter(({ file, update }) => {
    const current = read(file);
    return update(current) !== current;
  }).map(({ file }) => file);
}

if (require.main === module) {
  if (process.argv.includes('--write')) {
    for (const { file, update } of GENERATED_FILES) {
      const current = read(file);
      const next = update(current);
      if (next !== current) fs.writeFileSync(path.join(repoRoot(), file), next);
      process.stdout.write(`${file}: ${next === current ? 'current' : 'written'}\n`);
    }
  } else {
    const stale = staleFiles();
    for (const file of stale) process.stdout.write(`${file}: stale (npm run generate -w @worklane/testing)\n`);
    process.exitCode = stale.length > 0 ? 1 : 0;
  }
}
