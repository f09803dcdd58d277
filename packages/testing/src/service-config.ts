// What a service's own configuration (services/<name>/src/config.ts, built) says about it: the
// variables it reads and their defaults. The service table's checks and the chart catalog read it,
// so what a service needs (its signing key, the public keys it trusts, the list settings) is
// written once, in the service's own schema.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z, type ServiceName } from '@worklane/config';

import { repoRoot } from './repo';

export interface ConfigProperty {
  default?: unknown;
  description?: string;
}

const loaded = new Map<string, Record<string, ConfigProperty>>();

/** The variables the built service `name` reads (services/<name>/dist/config.js), by name. */
export function configOf(name: ServiceName | string): Record<string, ConfigProperty> {
  const cached = loaded.get(name);
  if (cached) return cached;
  const file = path.join(repoRoot(), 'services', name, 'dist', 'config.js');
  if (!fs.existsSync(file)) throw new Error(`${path.relative(repoRoot(), file)} does not exist: build first (npx turbo run build; npm test does)`);
  const { configSchema } = createRequire(__filename)(file) as { configSchema: z.ZodType };
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, ConfigProperty> };
  const properties = schema.properties ?? {};
  loaded.set(name, properties);
  return properties;
}
