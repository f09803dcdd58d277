import type { ParseArgsOptionDescriptor } from 'node:util';
import type { Api } from './api';
import type { Clients } from './clients';
import type { LoadedConfig } from './config';
import { UsageError } from './errors';

export interface Flag {
  name: string;
  /** Shown in help, e.g. "ID" or "EMAIL"; absent for boolean switches. */
  value?: string;
  description: string;
  required?: boolean;
}

export interface CommandContext {
  flags: Record<string, string | boolean | undefined>;
  config: LoadedConfig;
  clients: Clients;
  /** The public API, through the typed client (GATEWAY_URL, WORKLANE_TOKEN). */
  api: Api;
  /** Writes one JSON document as one line on stdout: the command's result. */
  print(result: unknown): void;
  /** Reads all of stdin (for --password-stdin). */
  readStdin(): Promise<string>;
}

export interface Command {
  /** Words that select it, e.g. ['token', 'create']. */
  path: string[];
  summary: string;
  /** Extra paragraphs for `--help`. */
  details?: string;
  flags: Flag[];
  run(context: CommandContext): Promise<void>;
}

export function parseOptions(command: Command): Record<string, ParseArgsOptionDescriptor> {
  const options: Record<string, ParseArgsOptionDescriptor> = { help: { type: 'boolean', short: 'h' } };
  for (const flag of command.flags) options[flag.name] = { type: flag.value ? 'string' : 'boolean' };
  return options;
}

/** A flag's value as a positive integer id, or a usage error naming the flag. */
export function idFlag(context: CommandContext, name: string): number {
  const raw = context.flags[name];
  if (typeof raw !== 'string' || !/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(raw ?? '')}`);
  }
  return Number(raw);
}

/** An optional flag's value as a positive integer, or a usage error naming the flag. */
export function optionalIdFlag(context: CommandContext, name: string): number | undefined {
  return context.flags[name] === undefined ? undefined : idFlag(context, name);
}

export function stringFlag(context: CommandContext, name: string): string {
  const raw = context.flags[name];
  if (typeof raw !== 'string' || raw.trim() === '') throw new UsageError(`--${name} must not be empty`);
  return raw;
}

export function optionalStringFlag(context: CommandContext, name: string): string | undefined {
  const raw = context.flags[name];
  return typeof raw === 'string' ? raw : undefined;
}

/** --password, or the first line of stdin with --password-stdin (kept out of `ps` and shell history). */
export async function passwordFlag(context: CommandContext): Promise<string> {
  const given = context.flags.password;
  const fromStdin = context.flags['password-stdin'] === true;
  if (typeof given === 'string' && fromStdin) throw new UsageError('give --password or --password-stdin, not both');
  if (fromStdin) {
    const password = (await context.readStdin()).split(/\r?\n/)[0] ?? '';
    if (password === '') throw new UsageError('--password-stdin: stdin was empty');
    return password;
  }
  if (typeof given !== 'string' || given === '') throw new UsageError('--password (or --password-stdin) is required');
  return given;
}

export const PASSWORD_FLAGS: Flag[] = [
  { name: 'password', value: 'PASSWORD', description: 'Password of a new user, at least 8 characters' },
  { name: 'password-stdin', description: 'Read the password from the first line of stdin instead' },
];
