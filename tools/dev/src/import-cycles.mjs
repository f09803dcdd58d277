// Import cycles in the repository's own sources: between modules of one package (type-only
// imports included, since they tie the files together just as much for a reader) and between
// workspace packages (their package.json dependencies).
//
//   node tools/dev/src/import-cycles.mjs    prints every cycle; exits 1 when there is one
//
// tools/dev/test/import-cycles.test.mjs runs it under `npm test`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { repoRoot } from './util.mjs';

const SOURCE = /\.(?:ts|mts|cts|mjs|cjs|js)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'coverage', '.turbo']);
// import … from '…', export … from '…' (with what stands between the keyword and `from`), import '…',
// import('…'), require('…').
const IMPORTS = /(?:\b(import|export)\s+([^'";]*?)\s*from\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"\n]+)['"]/g;

/** The workspace folders: proto, packages/*, services/*, tools/* (as package.json lists them). */
export function workspaces(root = repoRoot) {
  const patterns = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces ?? [];
  const dirs = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('/*')) {
      const parent = path.join(root, pattern.slice(0, -2));
      for (const entry of fs.existsSync(parent) ? fs.readdirSync(parent, { withFileTypes: true }) : []) {
        if (entry.isDirectory()) dirs.push(path.join(parent, entry.name));
      }
    } else {
      dirs.push(path.join(root, pattern));
    }
  }
  return dirs.filter((dir) => fs.existsSync(path.join(dir, 'package.json')));
}

function sourceFiles(dir) {
  const files = [];
  const walk = (current) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(path.join(current, entry.name));
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push(path.join(current, entry.name));
      }
    }
  };
  walk(dir);
  return files;
}

/** Strips comments, so that an import written in a comment does not count. */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Whether an import or export clause loads nothing at run time: `import type`, or only `type` names. */
function typeOnly(clause) {
  if (/^type\b/.test(clause)) return true;
  const named = clause.match(/^\{([^}]*)\}$/);
  return named !== null && named[1].split(',').every((name) => name.trim() === '' || /^type\b/.test(name.trim()));
}

/** What a source file imports, comments left out: each specifier, and whether only types come of it. */
export function importsOf(text) {
  return [...withoutComments(text).matchAll(IMPORTS)].map(([, keyword, clause, specifier]) => ({ specifier, typeOnly: keyword !== undefined && typeOnly(clause.trim()) }));
}

/** The file a relative specifier names (as written, or with a source extension, or an index), among those `isFile` accepts. */
export function resolveRelative(from, specifier, isFile) {
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(?:js|mjs|cjs)$/, '');
  const candidates = [base, ...['.ts', '.mts', '.cts', '.mjs', '.cjs', '.js'].flatMap((ext) => [stem + ext, path.join(base, `index${ext}`)])];
  return candidates.find(isFile) ?? null;
}

/** Module graph of one workspace: file -> files it imports (relative imports only). */
export function moduleGraph(dir) {
  const files = sourceFiles(dir);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const imports = new Set();
    for (const { specifier } of importsOf(fs.readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolveRelative(file, specifier, (candidate) => known.has(candidate));
      if (target && target !== file) imports.add(target);
    }
    graph.set(file, [...imports]);
  }
  return graph;
}

/** Workspace packages and the workspace packages each depends on (any kind of dependency). */
export function packageGraph(root = repoRoot) {
  const manifests = workspaces(root).map((dir) => JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')));
  const names = new Set(manifests.map((m) => m.name));
  const graph = new Map();
  for (const manifest of manifests) {
    const deps = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies };
    graph.set(
      manifest.name,
      Object.keys(deps).filter((name) => names.has(name) && name !== manifest.name),
    );
  }
  return graph;
}

/** The cycles of a graph: its strongly connected components of more than one node (Tarjan). */
export function cyclesOf(graph) {
  let index = 0;
  const indices = new Map();
  const lowlinks = new Map();
  const onStack = new Set();
  const stack = [];
  const cycles = [];
  const visit = (node) => {
    indices.set(node, index);
    lowlinks.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowlinks.set(node, Math.min(lowlinks.get(node), lowlinks.get(next)));
      } else if (onStack.has(next)) {
        lowlinks.set(node, Math.min(lowlinks.get(node), indices.get(next)));
      }
    }
    if (lowlinks.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

/** Every import cycle of the repository, as lists of repository-relative files or package names. */
export function importCycles(root = repoRoot) {
  const modules = workspaces(root).flatMap((dir) => cyclesOf(moduleGraph(dir)).map((cycle) => cycle.map((file) => path.relative(root, file))));
  const packages = cyclesOf(packageGraph(root));
  return { modules, packages };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { modules, packages } = importCycles();
  for (const cycle of packages) console.log(`packages: ${cycle.join(' <-> ')}`);
  for (const cycle of modules) console.log(`modules: ${cycle.join(' <-> ')}`);
  if (modules.length + packages.length === 0) console.log('no import cycles');
  else process.exitCode = 1;
}
