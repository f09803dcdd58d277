import { existsSync } from 'node:fs';
import path from 'node:path';
import { ciValueFiles, deployValueFiles, runHelm } from '../src/helm.mjs';
import { chartDir, ciValuesDir, repoRoot } from '../src/paths.mjs';

test('the chart has a ci value set for minimal, production-like and everything-enabled installs', () => {
  expect(ciValueFiles).toEqual(expect.arrayContaining(['minimal-values.yaml', 'production-values.yaml', 'all-enabled-values.yaml']));
});

test.each(ciValueFiles)('helm lint --strict passes with ci/%s', (file) => {
  const { status, stdout, stderr } = runHelm(['lint', '--strict', chartDir, '--values', path.join(ciValuesDir, file)]);
  expect({ status, output: stdout + stderr }).toEqual({ status: 0, output: expect.stringContaining('0 chart(s) failed') });
});

test.each(deployValueFiles)('helm lint --strict passes with %s', (file) => {
  expect(existsSync(path.join(repoRoot, file))).toBe(true);
  const { status, stdout, stderr } = runHelm(['lint', '--strict', chartDir, '--values', path.join(repoRoot, file)]);
  expect({ status, output: stdout + stderr }).toEqual({ status: 0, output: expect.stringContaining('0 chart(s) failed') });
});
