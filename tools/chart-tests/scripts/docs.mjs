// Regenerates the values reference in charts/worklane/README.md from values.yaml's `# --` comments.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chartDir } from '../src/paths.mjs';
import { withValuesTable } from '../src/values-doc.mjs';

const readmePath = path.join(chartDir, 'README.md');
const before = readFileSync(readmePath, 'utf8');
const after = withValuesTable(before);
writeFileSync(readmePath, after);
console.log(before === after ? 'README.md values table already up to date' : 'README.md values table updated');
