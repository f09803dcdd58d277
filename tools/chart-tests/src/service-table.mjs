// The services as the one service table declares them (packages/testing/src/service-table.ts),
// read from its source with the TypeScript parser, so checks of the chart, the images and the
// bake file need no build: [{ name, image, package }] in the table's order.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './paths.mjs';

const TABLE = 'packages/testing/src/service-table.ts';

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
    const field = (name) => {
      const property = element.properties.find((p) => p.name?.getText(source) === name);
      if (!property || !ts.isStringLiteral(property.initializer)) throw new Error(`${TABLE}: an entry without a literal ${name}`);
      return property.initializer.text;
    };
    return { name: field('name'), image: field('image'), package: field('package') };
  });
}
