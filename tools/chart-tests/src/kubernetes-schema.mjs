// Validates rendered objects against the Kubernetes API schemas shipped in kubernetes-models,
// offline, twice over:
//  - the models' compiled JSON-schema validators (types, formats, required fields, enums);
//  - the models' TypeScript declarations, through the TypeScript compiler, whose excess-property
//    check rejects unknown or misspelt fields (which the API server would silently drop).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './paths.mjs';

export function modelModule({ apiVersion, kind }) {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    throw new Error(`object without apiVersion/kind: ${JSON.stringify(apiVersion)} ${JSON.stringify(kind)}`);
  }
  if (apiVersion.startsWith('monitoring.coreos.com/')) {
    return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  }
  return `kubernetes-models/${apiVersion}/${kind}`;
}

export function describe(object) {
  return `${object.kind}/${object.metadata?.name ?? '<no name>'}`;
}

/** Schema errors of one object, as strings; empty when valid. */
export async function schemaErrors(object) {
  let module;
  try {
    module = await import(modelModule(object));
  } catch (error) {
    return [`${describe(object)}: no Kubernetes model for ${object.apiVersion} ${object.kind} (${error.message})`];
  }
  const Model = module[object.kind];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [`${describe(object)}: ${error.message}`];
  }
}

/**
 * Type-checks sets of objects against the models' declarations in one TypeScript program (one
 * file per set); returns, per label, one string per diagnostic.
 */
export function typeErrorsBySet(sets) {
  const dir = path.join(repoRoot, 'tools/chart-tests/.cache');
  mkdirSync(dir, { recursive: true });
  const files = Object.entries(sets).map(([label, objects]) => {
    const file = path.join(dir, `typecheck-${label.replace(/[^a-z0-9-]/gi, '_')}.ts`);
    const lines = [];
    const starts = [];
    objects.forEach((object, index) => {
      lines.push(`import type { I${object.kind} as T${index} } from ${JSON.stringify(modelModule(object))};`);
    });
    objects.forEach((object, index) => {
      starts.push({ line: lines.length, object });
      lines.push(...`export const o${index}: T${index} = ${JSON.stringify(object, null, 1)};`.split('\n'));
    });
    writeFileSync(file, lines.join('\n') + '\n');
    return { label, file, starts };
  });
  const program = ts.createProgram(
    files.map(({ file }) => file),
    {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: [],
    },
  );
  const result = Object.fromEntries(files.map(({ label }) => [label, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const owner = files.find(({ file }) => diagnostic.file && path.resolve(diagnostic.file.fileName) === file);
    if (!owner || diagnostic.start === undefined) {
      for (const label of Object.keys(result)) result[label].push(message);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const start = [...owner.starts].reverse().find((s) => s.line <= line);
    const text = diagnostic.file.text.split('\n')[line]?.trim();
    result[owner.label].push(`${start ? describe(start.object) : owner.file}: ${message} (at \`${text}\`)`);
  }
  return result;
}

/** Type-checks one set of objects; see typeErrorsBySet. */
export function typeErrors(objects, label) {
  return typeErrorsBySet({ [label]: objects })[label];
}
