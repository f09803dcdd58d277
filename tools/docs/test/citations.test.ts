import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The repository stands on its own: every file path that a tracked file mentions (in a comment, a
 * document or a message) is a file of the repository, and nothing points at product sources that
 * live outside it. Paths a command writes when it runs (a release image that does not exist yet)
 * are the only exception, listed here one pattern at a time.
 */
const root = join(__dirname, '..', '..', '..');
const WRITTEN_BY_COMMANDS = [/^proto\/releases\/\d+\.\d+\.\d+\.json$/];
const CITED_PATH = /\b(?:docs|services|packages|tools|charts|deploy|proto)\/[A-Za-z0-9_./-]+\.(?:md|ts|mjs|cjs|js|yaml|json|sql|proto|sh|tpl|py)\b/g;
const OUTSIDE_SOURCES = /\b(?:SPEC|DESIGN|STYLE|KUBERNETES)\.md\b/;

function trackedTextFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\0')
    .filter((file) => /\.(?:ts|tsx|mjs|cjs|js|md|yaml|yml|tpl|sh|py|sql|proto|toml|txt)$/.test(file) || file.endsWith('Dockerfile'))
    .filter((file) => !file.includes('/generated/') && existsSync(join(root, file)));
}

describe('what the repository cites', () => {
  const files = trackedTextFiles();

  it('every repository path mentioned in a tracked file exists', () => {
    const missing: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [cited] of text.matchAll(CITED_PATH)) {
        if (WRITTEN_BY_COMMANDS.some((pattern) => pattern.test(cited))) continue;
        if (!existsSync(join(root, cited))) missing.push(`${file}: ${cited}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('no tracked file refers to product sources kept outside the repository', () => {
    const citing = files.filter((file) => OUTSIDE_SOURCES.test(readFileSync(join(root, file), 'utf8')));
    expect(citing).toEqual([]);
  });
});
