import fs from 'node:fs';
import path from 'node:path';

/** What a schemathesis JUnit report says, per operation. */
export interface RunSummary {
  operations: number;
  failures: number;
  errors: number;
  skipped: number;
  /** `GET /teams/{team}/webhooks` and the first line of each of its failures. */
  failedOperations: string[];
}

const attribute = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** Reads the JUnit XML report schemathesis wrote into `directory` (one test case per operation). */
export function readJunitSummary(directory: string): RunSummary {
  const file = fs
    .readdirSync(directory)
    .filter((name) => name.endsWith('.xml'))
    .map((name) => path.join(directory, name))[0];
  if (!file) throw new Error(`no JUnit report in ${directory}`);
  const xml = fs.readFileSync(file, 'utf8');
  const summary: RunSummary = { operations: 0, failures: 0, errors: 0, skipped: 0, failedOperations: [] };
  for (const match of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    summary.operations += 1;
    const name = unescape(attribute(match[1] ?? '', 'name') ?? '?');
    const body = match[2] ?? '';
    const failures = [...body.matchAll(/<(failure|error)\b([^>]*)>/g)];
    if (/<skipped\b/.test(body)) summary.skipped += 1;
    for (const failure of failures) {
      if (failure[1] === 'failure') summary.failures += 1;
      else summary.errors += 1;
      const message = unescape(attribute(failure[2] ?? '', 'message') ?? failure[1] ?? '').split('\n')[0];
      summary.failedOperations.push(`${name}: ${message}`);
    }
  }
  return summary;
}
