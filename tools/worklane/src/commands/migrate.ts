import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from '@worklane/db';
import { optionalStringFlag, type Command } from '../command';
import { REPO_ROOT } from '../config';
import { CommandError, UsageError } from '../errors';

const SERVICES_DIR = join(REPO_ROOT, 'services');

/** Services that own a schema: those with a migrations folder, in name order. */
export function servicesWithMigrations(servicesDir = SERVICES_DIR): string[] {
  if (!existsSync(servicesDir)) return [];
  return readdirSync(servicesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(servicesDir, entry.name, 'migrations')))
    .map((entry) => entry.name)
    .sort();
}

export const migrateCommand: Command = {
  path: ['migrate'],
  summary: "Apply services' database migrations (services/<name>/migrations) to DATABASE_URL",
  details:
    'Each service gets the schema named after it. With --service, DATABASE_SCHEMA (when set) names the schema instead.\n' +
    'Safe to run while services run and from several places at once: each schema migrates under a lock.',
  flags: [{ name: 'service', value: 'NAME', description: 'Only this service (default: every service with migrations)' }],
  async run(context) {
    const databaseUrl = context.config.require('DATABASE_URL');
    const known = servicesWithMigrations();
    const only = optionalStringFlag(context, 'service');
    if (only !== undefined && !known.includes(only)) {
      throw new UsageError(`--service: no migrations for "${only}"; services with migrations: ${known.join(', ') || 'none'}`);
    }
    const targets = only ? [only] : known;
    const migrated: { service: string; schema: string; applied: string[] }[] = [];
    for (const service of targets) {
      const schema = only ? (context.config.values.DATABASE_SCHEMA ?? service) : service;
      try {
        const { applied } = await migrate(databaseUrl, schema, join(SERVICES_DIR, service, 'migrations'));
        migrated.push({ service, schema, applied });
      } catch (error) {
        throw new CommandError(`migrating ${service} (schema ${schema}) failed: ${(error as Error).message}`);
      }
    }
    context.print({ migrated });
  },
};
