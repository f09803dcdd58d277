import { grpc } from '@worklane/grpc';
import { PASSWORD_FLAGS, optionalStringFlag, passwordFlag, stringFlag, type Command, type CommandContext } from '../command';
import { CommandError } from '../errors';

const isCode = (error: unknown, code: grpc.status) => error instanceof CommandError && error.rpcCode === code;

/** The user with this address, created with the password when there is none yet. */
async function findOrCreateUser(context: CommandContext, email: string, password: string, name: string) {
  try {
    return await context.clients.getUserByEmail(email);
  } catch (error) {
    if (!isCode(error, grpc.status.NOT_FOUND)) throw error;
  }
  try {
    return await context.clients.createUser({ email, password, name });
  } catch (error) {
    // Another bootstrap created the same user a moment ago: use it.
    if (isCode(error, grpc.status.ALREADY_EXISTS)) return context.clients.getUserByEmail(email);
    throw error;
  }
}

export const bootstrap: Command = {
  path: ['bootstrap'],
  summary: 'Create (or reuse) a user, a new team they own, an organization in it and an API token',
  details:
    'Prints one JSON line: {"user_id":1,"team_id":1,"organization_id":1,"token_id":1,"token":"wl_..."}.\n' +
    'An existing user is reused as is: their password is not checked or changed. Every run creates a new team.',
  flags: [
    { name: 'email', value: 'EMAIL', description: 'Address of the user', required: true },
    ...PASSWORD_FLAGS,
    { name: 'team', value: 'NAME', description: 'Name of the new team', required: true },
    { name: 'organization', value: 'NAME', description: 'Name of the organization created in it', required: true },
    { name: 'token-name', value: 'NAME', description: 'Name of the API token', required: true },
    { name: 'name', value: 'NAME', description: 'Display name of a new user (default: the part of the address before @)' },
  ],
  async run(context) {
    // Every flag is checked before anything is created, so a typo leaves nothing half made.
    const email = stringFlag(context, 'email');
    const teamName = stringFlag(context, 'team');
    const organizationName = stringFlag(context, 'organization');
    const tokenName = stringFlag(context, 'token-name');
    const password = await passwordFlag(context);
    const user = await findOrCreateUser(context, email, password, optionalStringFlag(context, 'name') ?? '');
    const team = await context.clients.createTeam({ name: teamName, owner_user_id: user.id });
    const organization = await context.clients.createOrganization({ team_id: team.id, name: organizationName });
    const created = await context.clients.createToken({ team_id: team.id, user_id: user.id, name: tokenName });
    context.print({ user_id: user.id, team_id: team.id, organization_id: organization.id, token_id: created.token!.id, token: created.value });
  },
};
