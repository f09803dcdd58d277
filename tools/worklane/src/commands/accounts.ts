import { PASSWORD_FLAGS, idFlag, optionalStringFlag, passwordFlag, stringFlag, type Command } from '../command';

export const userCreate: Command = {
  path: ['user', 'create'],
  summary: 'Create a user who can sign in to the console',
  flags: [
    { name: 'email', value: 'EMAIL', description: 'Sign-in address (unique, whatever its case)', required: true },
    ...PASSWORD_FLAGS,
    { name: 'name', value: 'NAME', description: 'Display name (default: the part of the address before @)' },
  ],
  async run(context) {
    const user = await context.clients.createUser({
      email: stringFlag(context, 'email'),
      password: await passwordFlag(context),
      name: optionalStringFlag(context, 'name') ?? '',
    });
    context.print({ user_id: user.id, email: user.email, name: user.name });
  },
};

export const teamCreate: Command = {
  path: ['team', 'create'],
  summary: 'Create a team owned by an existing user',
  flags: [
    { name: 'name', value: 'NAME', description: 'Team name, 1 to 255 characters', required: true },
    { name: 'owner-email', value: 'EMAIL', description: 'Address of the user who will own the team', required: true },
  ],
  async run(context) {
    const owner = await context.clients.getUserByEmail(stringFlag(context, 'owner-email'));
    const team = await context.clients.createTeam({ name: stringFlag(context, 'name'), owner_user_id: owner.id });
    context.print({ team_id: team.id, name: team.name, owner_user_id: owner.id });
  },
};

export const memberAdd: Command = {
  path: ['member', 'add'],
  summary: 'Add an existing user to a team',
  flags: [
    { name: 'team', value: 'ID', description: 'Team id', required: true },
    { name: 'email', value: 'EMAIL', description: 'Address of the user to add', required: true },
    { name: 'role', value: 'ROLE', description: 'owner or member (default member)' },
  ],
  async run(context) {
    const user = await context.clients.getUserByEmail(stringFlag(context, 'email'));
    const membership = await context.clients.addMember({
      team_id: idFlag(context, 'team'),
      user_id: user.id,
      role: optionalStringFlag(context, 'role') ?? 'member',
    });
    context.print({ team_id: membership.team_id, user_id: membership.user_id, role: membership.role });
  },
};
