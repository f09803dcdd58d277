// The services as the one service table declares them (packages/config/src/service-table.ts),
// read from its source with the TypeScript parser, so checks of the chart, the images and the
// bake file need no build: [{ name, image, package, schema, nats, public }] in the table's order.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './paths.mjs';

const TABLE = 'packages/config/src/service-table.ts';

export function serviceTable() {
  const file = path.join(repoRoot, TABLE);
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  let entries;
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'ENTRIES' && node.initializer) {
      let init = node.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression?.(init) || ts.isParenthesizedExpression(init)) init = init.expression;
      if (ts.isCallExpression(init)) init = init.arguments[0];
      entries = init;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!entries || !ts.isArrayLiteralExpression(entries)) throw new Error(`${TABLE}: no ENTRIES array literal`);
  return entries.elements.map((element) => {
    const initializer = (name) => element.properties.find((p) => p.name?.getText(source) === name)?.initializer;
    const field = (name) => {
      const value = initializer(name);
      if (!value || !ts.isStringLiteral(value)) throw new Error(`${TABLE}: an entry without a literal ${name}`);
      return value.text;
    };
    const optionalField = (name) => (initializer(name)?.kind === ts.SyntaxKind.NullKeyword ? null : field(name));
    const flag = (name) => {
      const kind = initializer(name)?.kind;
      if (kind !== ts.SyntaxKind.TrueKeyword && kind !== ts.SyntaxKind.FalseKeyword) throw new Error(`${TABLE}: an entry without a literal ${name}`);
      return kind === ts.SyntaxKind.TrueKeyword;
    };
    return { name: field('name'), image: field('image'), package: field('package'), schema: optionalField('schema'), nats: flag('nats'), public: flag('public') };
  });
}
