// The memory limit the Helm chart gives each service by default (charts/worklane/values.yaml,
// `<service>.resources.limits.memory`, else `serviceDefaults.resources.limits.memory`), read
// without a YAML library: the file's layout is fixed.
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from '../../dev/src/util.mjs';

const UNITS = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024, k: 1e3 / 2 ** 20, M: 1e6 / 2 ** 20, G: 1e9 / 2 ** 20, T: 1e12 / 2 ** 20 };

/** A Kubernetes memory quantity (`256Mi`, `1G`, `134217728`) in MiB; NaN when it is not one. */
export function quantityMiB(quantity) {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(
    String(quantity)
      .trim()
      .replace(/^["']|["']$/g, ''),
  );
  if (!match) return NaN;
  return match[2] ? Number(match[1]) * UNITS[match[2]] : Number(match[1]) / 2 ** 20;
}

/**
 * `{ <block>: MiB }` for every top-level block of values.yaml that sets resources.limits.memory
 * (`serviceDefaults` among them). Use memoryLimitMiB to read one service's.
 */
export function chartMemoryLimitsMiB(valuesPath = path.join(repoRoot, 'charts', 'worklane', 'values.yaml')) {
  const limits = {};
  let block = null;
  let trail = []; // [indent, key] of the keys enclosing the current line within the block
  for (const line of fs.readFileSync(valuesPath, 'utf8').split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const match = /^(\s*)([\w.-]+):\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const indent = match[1].length;
    const [, , key, value] = match;
    if (indent === 0) {
      block = key;
      trail = [];
      continue;
    }
    while (trail.length > 0 && trail[trail.length - 1][0] >= indent) trail.pop();
    const keys = trail.map(([, name]) => name);
    if (block && key === 'memory' && keys.join('.') === 'resources.limits' && trail[0][0] === 2) {
      const mib = quantityMiB(value);
      if (Number.isFinite(mib)) limits[block] = mib;
    }
    trail.push([indent, key]);
  }
  return limits;
}

/** The memory limit of `service`: its own block's, else the one every service gets from serviceDefaults. */
export const memoryLimitMiB = (limits, service) => limits[service] ?? limits.serviceDefaults;
