// Generates TypeScript types for every proto with the same loader options the services load them with.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const options = JSON.parse(readFileSync(join(root, 'loader-options.json'), 'utf8'));

function protoFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return protoFiles(path);
    return path.endsWith('.proto') ? [relative(root, path)] : [];
  });
}

const flags = Object.entries(options).map(([name, value]) => (value === true ? `--${name}` : `--${name}=${value}`));
const outDir = join(root, 'src', 'generated');
rmSync(outDir, { recursive: true, force: true });
execFileSync('proto-loader-gen-types', ['--grpcLib=@grpc/grpc-js', `--outDir=${outDir}`, '--includeDirs=.', ...flags, ...protoFiles(join(root, 'worklane'))], {
  cwd: root,
  stdio: 'inherit',
});

// One barrel per proto package, so services import `tokenV1.Identity` instead of deep paths.
for (const file of protoFiles(join(root, 'worklane'))) {
  const packageDir = join(outDir, dirname(file));
  const modules = readdirSync(packageDir)
    .filter((entry) => entry.endsWith('.ts') && entry !== 'index.ts')
    .sort()
    .map((entry) => `export * from './${entry.slice(0, -3)}';`);
  writeFileSync(join(packageDir, 'index.ts'), `${modules.join('\n')}\n`);
}
