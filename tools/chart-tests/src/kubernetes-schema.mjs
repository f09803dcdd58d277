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

/** Type-checks the objects against the models' declarations; returns one string per diagnostic. */
export function typeErrors(objects, label) {
  const dir = path.join(repoRoot, 'tools/chart-tests/.cache');
  mkdirSync(dir, { recursive: true });
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
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const owner = [...starts].reverse().find((start) => start.line <= line);
    const text = diagnostic.file.text.split('\n')[line]?.trim();
    return `${owner ? describe(owner.object) : file}: ${message} (at \`${text}\`)`;
  });
}
