import { parseArgs } from 'node:util';
import { ConfigError } from '@worklane/config';
import { Api } from './api';
import { Clients } from './clients';
import { parseOptions, type Command } from './command';
import { memberAdd, teamCreate, userCreate } from './commands/accounts';
import { bootstrap } from './commands/bootstrap';
import { issueCreate, issueList } from './commands/issues';
import { migrateCommand } from './commands/migrate';
import { organizationCreate } from './commands/organization';
import { organizationList, projectCreate, projectList } from './commands/projects';
import { tokenCreate, tokenList, tokenRevoke } from './commands/tokens';
import { webhookCreate, webhookList } from './commands/webhooks';
import { loadCliConfig, type LoadedConfig } from './config';
import { CommandError, UsageError } from './errors';

export const COMMANDS: Command[] = [
  bootstrap,
  tokenCreate,
  tokenRevoke,
  tokenList,
  userCreate,
  teamCreate,
  memberAdd,
  organizationCreate,
  migrateCommand,
  // Through the public API, as an API token, with the client generated from its OpenAPI document.
  organizationList,
  projectCreate,
  projectList,
  issueCreate,
  issueList,
  webhookCreate,
  webhookList,
];

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  env: Record<string, string | undefined>;
  /** Configuration from a running `npm start`; injected by tests. */
  loadConfig?: (env: Record<string, string | undefined>) => LoadedConfig;
}

const name = (command: Command) => command.path.join(' ');

function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => name(command).length));
  return [
    'Usage: worklane <command> [flags]',
    '',
    'Operate a Worklane system: users, teams, organizations, API tokens and database migrations,',
    'and call the API as a team (organizations, projects, issues, webhooks).',
    '',
    'Commands:',
    ...COMMANDS.map((command) => `  ${name(command).padEnd(width)}  ${command.summary}`),
    '',
    'Run `worklane <command> --help` for its flags. Results are printed as one JSON line.',
    '',
    'Reads TOKEN_SERVICE_ADDR, PROJECT_GRPC_ADDR, CLI_PRIVATE_KEY, DATABASE_URL and GATEWAY_URL; those',
    'not set are taken from the system `npm start` is running (.worklane/dev/runtime.json). The API',
    'commands call the API as the API token in WORKLANE_TOKEN (API_TIMEOUT_MS per answer).',
  ].join('\n');
}

function commandHelp(command: Command): string {
  const label = (flag: Command['flags'][number]) => `--${flag.name}${flag.value ? ` ${flag.value}` : ''}`;
  const width = Math.max(...command.flags.map((flag) => label(flag).length), 10);
  const usage = command.flags.filter((flag) => flag.required).map(label);
  return [
    `Usage: worklane ${name(command)}${usage.length ? ` ${usage.join(' ')}` : ''}${command.flags.some((flag) => !flag.required) ? ' [flags]' : ''}`,
    '',
    command.summary + '.',
    ...(command.details ? ['', command.details] : []),
    '',
    'Flags:',
    ...command.flags.map((flag) => `  ${label(flag).padEnd(width)}  ${flag.description}${flag.required ? ' (required)' : ''}`),
    `  ${'--help'.padEnd(width)}  Show this help`,
  ].join('\n');
}

/** The command the leading words select, and the arguments after them. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const command of COMMANDS) {
    if (command.path.every((word, index) => argv[index] === word)) return { command, rest: argv.slice(command.path.length) };
  }
  return undefined;
}

/** Runs the CLI; resolves to the exit code (0 done, 1 failed, 2 wrong usage). Never throws. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    (argv.length === 0 ? io.stderr : io.stdout)(`${generalHelp()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = COMMANDS.filter((command) => command.path[0] === argv[0]);
    const hint = group.length > 0 ? `\`worklane ${argv[0]}\` takes one of: ${group.map((command) => command.path[1]).join(', ')}` : 'run `worklane --help` for the list';
    io.stderr(`worklane: unknown command "${argv.slice(0, 2).join(' ')}": ${hint}\n`);
    return 2;
  }
  const { command, rest } = found;

  let clients: Clients | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: parseOptions(command), strict: true, allowPositionals: false });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const flags = parsed.values as Record<string, string | boolean | undefined>;
    if (flags.help) {
      io.stdout(`${commandHelp(command)}\n`);
      return 0;
    }
    const missing = command.flags.filter((flag) => flag.required && flags[flag.name] === undefined).map((flag) => `--${flag.name}`);
    if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);

    const config = (io.loadConfig ?? loadCliConfig)(io.env);
    clients = new Clients(config);
    await command.run({
      flags,
      config,
      clients,
      api: new Api(config),
      print: (result) => io.stdout(`${JSON.stringify(result)}\n`),
      readStdin: io.readStdin,
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`worklane ${name(command)}: ${error.message}\nRun \`worklane ${name(command)} --help\` for usage.\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.stderr(`worklane: ${error.message}\n`);
      return 2;
    }
    if (error instanceof CommandError) {
      io.stderr(`worklane ${name(command)}: ${error.message}\n`);
      return 1;
    }
    // Not a failure we foresaw: say what it was without the stack, which helps no operator.
    io.stderr(`worklane ${name(command)}: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  } finally {
    clients?.close();
  }
}
