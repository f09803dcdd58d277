import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Assets } from './views/layout';

/** The stylesheet and script the pages load, served under /assets. */
export const PUBLIC_DIR = join(__dirname, '..', 'public');

/** Asset URLs carry a hash of their content, so a new build is fetched at once. */
export function fingerprintAssets(): Assets {
  const url = (file: string) => {
    const hash = createHash('sha256')
      .update(readFileSync(join(PUBLIC_DIR, file)))
      .digest('hex')
      .slice(0, 12);
    return `/assets/${file}?v=${hash}`;
  };
  return { css: url('console.css'), js: url('console.js') };
}
