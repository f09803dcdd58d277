// The `outcome` label values of worklane_webhook_deliveries_total, read from the delivery
// service's own source with the TypeScript compiler, so the alerts are checked against what the
// code emits rather than against a list someone copied:
//  - declared: the DeliveryOutcome type of services/delivery/src/metrics.ts;
//  - emitted: the type of `outcome` at every `….deliveries.inc({ outcome })` call in
//    services/delivery/src, resolved through the domain types (FailureReason, decide()).
// A value that does not resolve to string literals shows as `<type>`, so a call that passes a
// plain string is caught instead of silently allowing anything.
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './paths.mjs';

const serviceDir = path.join(repoRoot, 'services/delivery');
const isTest = (file) => /\.test\.ts$/.test(file) || file.includes(`${path.sep}test${path.sep}`);

function createProgram() {
  const configPath = path.join(serviceDir, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, serviceDir);
  const rootNames = parsed.fileNames.filter((file) => file.startsWith(path.join(serviceDir, 'src')) && !isTest(file));
  return ts.createProgram({ rootNames, options: { ...parsed.options, noEmit: true, types: [] } });
}

function literalsOf(checker, type) {
  if (type.isUnion()) return type.types.flatMap((member) => literalsOf(checker, member));
  if (type.isStringLiteral()) return [type.value];
  return [`<${checker.typeToString(type)}>`];
}

/** The `outcome` property of a `deliveries.inc({...})` call, or undefined for another call. */
function outcomeArgument(node) {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return undefined;
  const { expression: target, name } = node.expression;
  if (name.text !== 'inc' || !ts.isPropertyAccessExpression(target) || target.name.text !== 'deliveries') return undefined;
  const [labels] = node.arguments;
  if (!labels || !ts.isObjectLiteralExpression(labels)) return null;
  const property = labels.properties.find((p) => p.name && ts.isIdentifier(p.name) && p.name.text === 'outcome');
  if (!property) return null;
  return ts.isShorthandPropertyAssignment(property) ? property.name : property.initializer;
}

let cached;

/** { declared: string[], emitted: string[], calls: string[] } (sorted, unique; calls as file:line). */
export function deliveryOutcomes() {
  if (cached) return cached;
  const program = createProgram();
  const checker = program.getTypeChecker();
  const metricsFile = program.getSourceFile(path.join(serviceDir, 'src/metrics.ts'));
  const alias = metricsFile?.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === 'DeliveryOutcome');
  if (!alias) throw new Error('services/delivery/src/metrics.ts no longer declares the DeliveryOutcome type');
  const declared = literalsOf(checker, checker.getTypeFromTypeNode(alias.type));

  const emitted = [];
  const calls = [];
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(path.join(serviceDir, 'src')) || isTest(file.fileName)) continue;
    const visit = (node) => {
      const argument = outcomeArgument(node);
      if (argument !== undefined) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
        calls.push(`${path.relative(repoRoot, file.fileName)}:${line + 1}`);
        emitted.push(...(argument === null ? ['<no outcome label>'] : literalsOf(checker, checker.getTypeAtLocation(argument))));
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  const unique = (values) => [...new Set(values)].sort();
  cached = { declared: unique(declared), emitted: unique(emitted), calls };
  return cached;
}
