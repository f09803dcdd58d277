// Writes schemas/<type>.v<version>.json, the JSON Schema of every bus message, from the built zod
// schemas (dist/). Run by `npm run schemas -w @worklane/messaging`. A version already committed
// is only rewritten when the change is compatible (an added optional field, a new description);
// anything else is refused, listed, and belongs in a new version (docs/events.md).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const folder = path.join(here, '..', 'schemas');
const require = createRequire(import.meta.url);
const { breakingChanges, eventJsonSchemas, schemaText } = require(path.join(here, '..', 'dist', 'index.js'));

const refused = [];
const written = [];
fs.mkdirSync(folder, { recursive: true });
for (const { file, schema } of eventJsonSchemas()) {
  const target = path.join(folder, file);
  const text = schemaText(schema);
  if (fs.existsSync(target)) {
    const committed = fs.readFileSync(target, 'utf8');
    if (committed === text) continue;
    const breaking = breakingChanges(JSON.parse(committed), schema);
    if (breaking.length > 0) {
      refused.push(`${file}:\n  ${breaking.join('\n  ')}`);
      continue;
    }
  }
  fs.writeFileSync(target, text);
  written.push(file);
}
for (const file of written) process.stdout.write(`wrote schemas/${file}\n`);
if (refused.length > 0) {
  process.stderr.write(
    `These changes would break consumers of a published version; the files keep their version.\n` +
      `Keep that version's schema as it is and add the change as a new version (docs/events.md):\n${refused.join('\n')}\n`,
  );
  process.exit(1);
}
