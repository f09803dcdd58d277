// The suite's bookkeeping: phases, each timed, made of checks that pass or fail, and the closing
// `N passed, M failed` line. A check that throws fails with its message; the suite goes on to the
// next check unless the phase cannot (a phase's setup failing fails every check after it).
import { formatMs, say } from '../../dev/src/util.mjs';

export class Suite {
  passed = 0;
  failed = 0;
  /** @type {{name: string, ms: number}[]} */
  phases = [];
  failures = [];

  /** Runs fn(phase) as a named, timed phase; an exception in it counts as one failed check. */
  async phase(name, fn) {
    const started = Date.now();
    say(`== ${name}`);
    try {
      await fn(this);
    } catch (error) {
      this.fail(`${name}: ${error?.message ?? error}`);
    } finally {
      const ms = Date.now() - started;
      this.phases.push({ name, ms });
      say(`== ${name}: ${formatMs(ms)}`);
    }
  }

  /** Runs one check; resolves true when it passed. */
  async check(name, fn) {
    try {
      await fn();
      this.pass(name);
      return true;
    } catch (error) {
      this.fail(`${name}: ${error?.message ?? error}`);
      return false;
    }
  }

  pass(name) {
    this.passed += 1;
    process.stdout.write(`  ok   ${name}\n`);
  }

  fail(message) {
    this.failed += 1;
    this.failures.push(message);
    process.stdout.write(`  FAIL ${message.replace(/\n/g, '\n       ')}\n`);
  }

  /** Prints the phase times and the closing line; returns the exit code. */
  summary(totalMs) {
    process.stdout.write('\nphase times:\n');
    for (const { name, ms } of this.phases) process.stdout.write(`  ${name.padEnd(48)} ${formatMs(ms)}\n`);
    process.stdout.write(`  ${'total'.padEnd(48)} ${formatMs(totalMs)}\n\n`);
    if (this.passed + this.failed === 0) this.fail('no check ran');
    process.stdout.write(`${this.passed} passed, ${this.failed} failed\n`);
    return this.failed === 0 ? 0 : 1;
  }
}
