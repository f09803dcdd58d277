// Jest testResultsProcessor used by `npm test` (tools/dev/bin/test.mjs passes it with
// --testResultsProcessor): writes a compact summary of the run to
// $WORKLANE_JEST_RESULTS_DIR/<package>.json so that the runner can count tests across packages.
// Returns the results unchanged; does nothing when the variable is not set.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

function packageName(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name || path.basename(dir);
  } catch {
    return path.basename(dir);
  }
}

module.exports = function worklaneResultsProcessor(results) {
  const dir = process.env.WORKLANE_JEST_RESULTS_DIR;
  if (!dir) return results;
  try {
    const cwd = process.cwd();
    const name = packageName(cwd);
    const suites = (results.testResults || []).map((suite) => ({
      file: path.relative(cwd, suite.testFilePath || ''),
      // A suite that could not run (syntax error, failing beforeAll import...) has no test results.
      execError: suite.testExecError ? String(suite.testExecError.message || suite.testExecError).slice(0, 2000) : null,
      failureMessage: suite.failureMessage ? String(suite.failureMessage).slice(0, 4000) : null,
      numPassing: suite.numPassingTests || 0,
      numFailing: suite.numFailingTests || 0,
      numPending: (suite.numPendingTests || 0) + (suite.numTodoTests || 0),
      failedTests: (suite.testResults || []).filter((t) => t.status === 'failed').map((t) => t.fullName || t.title),
    }));
    const summary = {
      package: name,
      cwd,
      success: Boolean(results.success),
      numTotalTests: results.numTotalTests || 0,
      numPassedTests: results.numPassedTests || 0,
      numFailedTests: results.numFailedTests || 0,
      numPendingTests: (results.numPendingTests || 0) + (results.numTodoTests || 0),
      numFailedTestSuites: results.numFailedTestSuites || 0,
      numRuntimeErrorTestSuites: results.numRuntimeErrorTestSuites || 0,
      suites,
    };
    fs.mkdirSync(dir, { recursive: true });
    const base = name.replace(/[^\w.-]+/g, '_');
    let file = path.join(dir, `${base}.json`);
    if (fs.existsSync(file)) file = path.join(dir, `${base}.${process.pid}.json`);
    fs.writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  } catch (err) {
    process.stderr.write(`worklane results processor: ${err && err.message}\n`);
  }
  return results;
};
