// The third-party packages each service thread loads, read from the sources: the value imports
// of the thread's entry module, followed through the service's own modules and into the workspace
// packages (a package's barrel, or the module a subpath of its `exports` names). Type-only imports
// load nothing and are left out.
//
//   node tools/dev/src/thread-imports.mjs    prints each thread's packages
//
// A thread loads its own copy of every module it imports (docs/performance.md, "Memory"), so a
// barrel import that pulls in a client the thread never uses costs heap in that thread.
// tools/dev/test/thread-imports.test.mjs keeps the threads that must stay light from loading them.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { importsOf, resolveRelative, workspaces } from './import-cycles.mjs';
import { repoRoot } from './util.mjs';

const BUILTINS = new Set(builtinModules);

/** Value specifiers a source file imports: type-only imports and exports load nothing. */
export function valueImports(text) {
  return importsOf(text)
    .filter((entry) => !entry.typeOnly)
    .map((entry) => entry.specifier);
}

/** Workspace packages by name: their folder and their `exports` mapped to source files. */
function workspacePackages(root) {
  const packages = new Map();
  for (const dir of workspaces(root)) {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    // dist/x.js is built from src/x.ts (dist/src/x.js from src/x.ts where the package has other roots).
    const toSource = (built) => {
      const inDist = built
        .replace(/^\.\//, '')
        .replace(/^dist\//, '')
        .replace(/\.js$/, '.ts');
      return [path.join(dir, 'src', inDist), path.join(dir, inDist)].find((file) => fs.existsSync(file)) ?? path.join(dir, 'src', inDist);
    };
    const entries = new Map();
    if (manifest.exports) {
      for (const [subpath, target] of Object.entries(manifest.exports)) entries.set(subpath, toSource(typeof target === 'string' ? target : target.default));
    } else if (manifest.main) {
      entries.set('.', toSource(manifest.main));
    }
    packages.set(manifest.name, entries);
  }
  return packages;
}

/** The package a bare specifier names: `undici`, `@nats-io/jetstream` (its subpath dropped). */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const isFile = (file) => fs.existsSync(file) && fs.statSync(file).isFile();

/** The third-party packages a thread's entry module loads, sorted. */
export function packagesLoadedBy(entry, root = repoRoot) {
  const workspace = workspacePackages(root);
  const loaded = new Set();
  const seen = new Set();
  const pending = [path.resolve(root, entry)];
  while (pending.length > 0) {
    const file = pending.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of valueImports(fs.readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier, isFile);
        if (target) pending.push(target);
        continue;
      }
      if (specifier.startsWith('node:') || BUILTINS.has(specifier)) continue;
      const name = packageOf(specifier);
      const entries = workspace.get(name);
      if (!entries) {
        loaded.add(name);
        continue;
      }
      const subpath = specifier === name ? '.' : `.${specifier.slice(name.length)}`;
      const target = entries.get(subpath);
      if (!target) throw new Error(`${path.relative(root, file)}: ${specifier} is not among ${name}'s exports`);
      pending.push(target);
    }
  }
  return [...loaded].sort();
}

/** Every thread's entry module: each service's src/main.ts and src/*-thread/main.ts. */
export function threadEntries(root = repoRoot) {
  const entries = [];
  for (const dir of workspaces(root).filter((dir) => path.relative(root, dir).startsWith('services'))) {
    const src = path.join(dir, 'src');
    if (fs.existsSync(path.join(src, 'main.ts'))) entries.push(path.join(src, 'main.ts'));
    for (const thread of fs.readdirSync(src).filter((name) => name.endsWith('-thread'))) entries.push(path.join(src, thread, 'main.ts'));
  }
  return entries.map((entry) => path.relative(root, entry));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const entry of threadEntries()) console.log(`${entry}: ${packagesLoadedBy(entry).join(' ')}`);
}
