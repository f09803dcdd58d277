// `npm run lint` inside `npm test`: ESLint (eslint.config.mjs) with no error and no warning, and
// every file laid out as Prettier lays it out (.prettierrc.json; `npm run format` fixes both).
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { expect, test } from '@jest/globals';

import { repoRoot } from '../src/util.mjs';

const bin = (name) => path.join(repoRoot, 'node_modules', '.bin', name);
const run = (command, args) => spawnSync(bin(command), args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

test('ESLint finds nothing: no error, no warning', () => {
  const result = run('eslint', ['.', '--max-warnings', '0']);
  expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
  expect(result.status).toBe(0);
}, 180_000);

test('every file is formatted as Prettier formats it (npm run format)', () => {
  const result = run('prettier', ['--check', '.', '--log-level', 'warn']);
  expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
  expect(result.status).toBe(0);
}, 180_000);
