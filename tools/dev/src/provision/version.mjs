// Reading and comparing the versions that tools print.
import { spawnSync } from 'node:child_process';

/** The first dotted version number in text (`v2.9.10`, `PostgreSQL) 15.18`), as [major, minor, patch]. */
export function parseVersion(text) {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(text ?? ''));
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : null;
}

/** True when version (text or parsed) is at least minimum (text). */
export function atLeast(version, minimum) {
  const have = Array.isArray(version) ? version : parseVersion(version);
  const need = parseVersion(minimum);
  if (!have || !need) return false;
  for (let i = 0; i < 3; i += 1) {
    if (have[i] !== need[i]) return have[i] > need[i];
  }
  return true;
}

export const formatVersion = (parsed) => (parsed ? parsed.join('.') : 'unknown');

/**
 * The version a binary reports (`bin ...args`), parsed; null when it cannot run or prints none.
 * Output of both streams is read: some tools print their version on stderr.
 */
export function probeVersion(bin, args = ['--version'], env = process.env) {
  const result = spawnSync(bin, args, { encoding: 'utf8', timeout: 20_000, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) return null;
  return parseVersion(`${result.stdout}\n${result.stderr}`);
}
