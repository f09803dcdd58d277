import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const chartDir = path.join(repoRoot, 'charts/worklane');
export const ciValuesDir = path.join(chartDir, 'ci');
