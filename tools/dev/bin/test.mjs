#!/usr/bin/env node
// `npm test [-- turbo args] [-- jest args]`: build, start a throwaway PostgreSQL + NATS
// (.worklane/test, fresh each run, fsync off), run `turbo run test --concurrency=1` against them,
// stop them, and print `N passed, N failed` counted from jest's results.
//
//   npm test -- --filter=@worklane/project           # turbo arguments
//   npm test -- --filter=@worklane/project -- -t name # arguments after a second -- go to jest
//   WORKLANE_SKIP_BUILD=1 npm test ...                 # skip `turbo run build` and `turbo run typecheck`
//
// After the build, `turbo run typecheck` checks every workspace's sources and tests with tsc (jest
// only transpiles them); a type error stops the run before any test.
import fs from 'node:fs';
import path from 'node:path';

import { provision, toolVariables, useProjectNode } from '../src/provision/index.mjs';
import { removeStackDir, stackInUse, startStack, worklaneDir } from '../src/stack.mjs';
import { UserError, formatMs, repoRoot, say, signalTools, spawnTurbo, toolEnv, turboBuild, waitForExit } from '../src/util.mjs';

await useProjectNode();

/** Every external tool some test runs: provisioned before the tests, never skipped for. */
const TEST_TOOLS = ['postgres', 'natsServer', 'helm', 'chromium', 'schemathesis', 'buf'];

const argv = process.argv.slice(2);
const separator = argv.indexOf('--');
const turboArgs = separator >= 0 ? argv.slice(0, separator) : argv;
const jestArgs = separator >= 0 ? argv.slice(separator + 1) : [];
const processor = path.join(repoRoot, 'tools', 'dev', 'src', 'jest-results-processor.cjs');

let stack = null;
let interrupted = null;

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = sig;
    say(`${sig}: stopping the tests...`);
    signalTools(sig === 'SIGHUP' ? 'SIGTERM' : sig);
    // turbo forwards the signal to the running tasks; if it lingers, the run ends anyway.
    setTimeout(() => signalTools('SIGKILL'), 20_000).unref();
  });
}

let ownStackDir = null;

async function finish(code) {
  if (stack) {
    await stack.stop().catch((err) => say(`could not stop the test stack: ${err?.message ?? err}`));
  }
  if (ownStackDir) await removeStackDir(ownStackDir).catch(() => undefined);
  process.exit(code);
}

/** The newest turbo run summary written after `since` (turbo --summarize). */
function readRunSummary(since) {
  const dir = path.join(repoRoot, '.turbo', 'runs');
  try {
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({ file: path.join(dir, f), mtime: fs.statSync(path.join(dir, f)).mtimeMs }))
      .filter((f) => f.mtime >= since)
      .sort((a, b) => b.mtime - a.mtime);
    return files.length > 0 ? JSON.parse(fs.readFileSync(files[0].file, 'utf8')) : null;
  } catch {
    return null;
  }
}

/**
 * Counts tests from the jest results processor's files, checked against turbo's per-task exit
 * codes: a test task that failed without jest results (jest crashed, bad config) counts as one
 * failure. Returns null when the counts cannot be trusted.
 */
function countTests(resultsDir, summary) {
  const results = new Map();
  try {
    for (const f of fs.readdirSync(resultsDir)) {
      if (!f.endsWith('.json')) continue;
      const r = JSON.parse(fs.readFileSync(path.join(resultsDir, f), 'utf8'));
      const list = results.get(r.package) ?? [];
      list.push(r);
      results.set(r.package, list);
    }
  } catch {
    // no results at all
  }
  if (!summary || !Array.isArray(summary.tasks)) return null;
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const perPackage = [];
  const failures = [];
  for (const task of summary.tasks) {
    if (task.task !== 'test' || task.command === '<NONEXISTENT>') continue;
    const exitCode = task.execution?.exitCode;
    const runs = results.get(task.package) ?? [];
    const row = { package: task.package, passed: 0, failed: 0, skipped: 0, exitCode };
    for (const r of runs) {
      row.passed += r.numPassedTests;
      row.failed += r.numFailedTests;
      row.skipped += r.numPendingTests;
      for (const suite of r.suites) {
        for (const t of suite.failedTests) failures.push(`${task.package} ${suite.file}: ${t}`);
        if (suite.numFailing === 0 && (suite.execError || suite.failureMessage)) {
          // The suite failed without any failing test: it did not run.
          row.failed += 1;
          failures.push(`${task.package} ${suite.file}: suite failed to run`);
        }
      }
    }
    if (exitCode === undefined || exitCode === null) {
      // Not run (cancelled): unknown.
      if (runs.length === 0) return null;
    } else if (exitCode !== 0 && row.failed === 0) {
      row.failed += 1;
      failures.push(`${task.package}: test task exited with code ${exitCode}${runs.length === 0 ? ' without jest results' : ''}`);
    }
    totals.passed += row.passed;
    totals.failed += row.failed;
    totals.skipped += row.skipped;
    perPackage.push(row);
  }
  return { totals, perPackage, failures };
}

async function main() {
  const started = Date.now();
  // WORKLANE_SKIP_BUILD=1 skips the build (when iterating on tests of an already built tree).
  const skipBuild = ['1', 'true'].includes(process.env.WORKLANE_SKIP_BUILD ?? '');
  // Tools (downloads, apt, go builds) and the TypeScript build run side by side.
  say(`provisioning ${TEST_TOOLS.join(', ')}${skipBuild ? '' : ' and building (turbo run build)'}...`);
  const toolsReady = provision(TEST_TOOLS);
  toolsReady.catch(() => undefined);
  const buildStarted = Date.now();
  const buildCode = skipBuild ? 0 : await turboBuild();
  if (!skipBuild) say(`build done in ${formatMs(Date.now() - buildStarted)} (exit ${buildCode})`);
  const tools = await toolsReady;
  if (interrupted) return finish(130);
  if (buildCode !== 0) {
    say(`the build failed (exit ${buildCode}); no test was run.`);
    return finish(buildCode || 1);
  }
  if (!skipBuild) {
    const typecheckStarted = Date.now();
    const typecheckCode = await turboBuild(['--output-logs=errors-only', ...turboArgs], 'typecheck');
    say(`typecheck done in ${formatMs(Date.now() - typecheckStarted)} (exit ${typecheckCode})`);
    if (interrupted) return finish(130);
    if (typecheckCode !== 0) {
      say(`the typecheck failed (exit ${typecheckCode}); no test was run.`);
      return finish(typecheckCode || 1);
    }
  }

  // Another `npm test` in this checkout holds .worklane/test: use a stack of our own.
  let stackName = 'test';
  if (stackInUse(path.join(worklaneDir, 'test'))) {
    stackName = `test-${process.pid}`;
    say(`.worklane/test is in use by another run: using .worklane/${stackName}`);
  }
  for (const entry of fs.existsSync(worklaneDir) ? fs.readdirSync(worklaneDir) : []) {
    const dir = path.join(worklaneDir, entry);
    if (/^test-\d+$/.test(entry) && entry !== stackName && !stackInUse(dir)) await removeStackDir(dir);
  }
  const stackStarted = Date.now();
  stack = await startStack({ name: stackName, fast: true, fresh: true, handleSignals: false });
  say(`test stack started in ${formatMs(Date.now() - stackStarted)}`);
  if (stackName !== 'test') ownStackDir = stack.dir;
  if (interrupted) return finish(130);
  say(`test stack: ${stack.databaseUrl} ${stack.natsUrl}${stack.postgres || stack.nats ? '' : ' (from the environment)'}`);

  const resultsDir = path.join(stack.dir, 'jest-results');
  fs.rmSync(resultsDir, { recursive: true, force: true });
  fs.mkdirSync(resultsDir, { recursive: true });
  const env = toolEnv({
    ...toolVariables(tools),
    DATABASE_URL: stack.databaseUrl,
    NATS_URL: stack.natsUrl,
    WORKLANE_REPO_ROOT: repoRoot,
    WORKLANE_JEST_RESULTS_DIR: resultsDir,
  });

  const testStarted = Date.now();
  // --env-mode=loose: test tasks are never cached, and tests may need any variable (HOME, HELM_BIN...).
  const args = ['run', 'test', '--concurrency=1', '--continue', '--env-mode=loose', '--summarize=true', ...turboArgs, '--', `--testResultsProcessor=${processor}`, ...jestArgs];
  const child = spawnTurbo(args, { env });
  const { code, signal } = await waitForExit(child);
  const exitCode = interrupted ? 130 : (code ?? (signal ? 1 : 0));

  const counted = countTests(resultsDir, readRunSummary(testStarted - 1000));
  process.stdout.write('\n');
  if (counted) {
    for (const row of counted.perPackage) {
      process.stdout.write(
        `  ${row.package.padEnd(28)} ${String(row.passed).padStart(4)} passed ${String(row.failed).padStart(3)} failed` + `${row.skipped ? ` ${row.skipped} skipped` : ''}\n`,
      );
    }
    if (counted.failures.length > 0) {
      process.stdout.write('\nFailed:\n');
      for (const f of counted.failures.slice(0, 100)) process.stdout.write(`  ✕ ${f}\n`);
      if (counted.failures.length > 100) process.stdout.write(`  ... and ${counted.failures.length - 100} more\n`);
    }
  }
  say(`tests ${exitCode === 0 ? 'passed' : 'FAILED'} (exit ${exitCode}) in ${formatMs(Date.now() - testStarted)}; total ${formatMs(Date.now() - started)}`);
  let finalCode = exitCode;
  if (counted && !interrupted) {
    if (finalCode === 0 && counted.totals.failed > 0) finalCode = 1;
    const { passed, failed, skipped } = counted.totals;
    process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  } else if (!interrupted) {
    say('could not count the tests (no turbo run summary or jest results)');
  }
  return finish(finalCode);
}

main().catch((err) => {
  say(err instanceof UserError ? err.message : (err?.stack ?? String(err)));
  return finish(1);
});
