// The pid files the local servers and the dev runner leave in their directories.
import fs from 'node:fs';

/** The pid on the first line of `file`, or null when there is none. */
export function readPid(file) {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').split('\n')[0], 10);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}
