import { idFlag, stringFlag, type Command } from '../command';

export const tokenCreate: Command = {
  path: ['token', 'create'],
  summary: 'Create an API token for a member of a team; the value is printed once',
  flags: [
    { name: 'team', value: 'ID', description: 'Team the token may act on', required: true },
    { name: 'email', value: 'EMAIL', description: 'Address of the member who owns the token', required: true },
    { name: 'name', value: 'NAME', description: 'What the token is for, 1 to 255 characters', required: true },
  ],
  async run(context) {
    const teamId = idFlag(context, 'team');
    const user = await context.clients.getUserByEmail(stringFlag(context, 'email'));
    const created = await context.clients.createToken({ team_id: teamId, user_id: user.id, name: stringFlag(context, 'name') });
    context.print({ token_id: created.token!.id, token: created.value });
  },
};

export const tokenRevoke: Command = {
  path: ['token', 'revoke'],
  summary: 'Revoke an API token; every request made with it afterwards gets 401',
  details: 'Exits 0 once the revocation is in force on every gateway.',
  flags: [
    { name: 'team', value: 'ID', description: 'Team of the token', required: true },
    { name: 'token-id', value: 'ID', description: 'Id of the token (see `worklane token list`)', required: true },
  ],
  async run(context) {
    const teamId = idFlag(context, 'team');
    const tokenId = idFlag(context, 'token-id');
    await context.clients.revokeToken(teamId, tokenId);
    context.print({ token_id: tokenId, revoked: true });
  },
};

export const tokenList: Command = {
  path: ['token', 'list'],
  summary: "List a team's API tokens, newest first (never their values)",
  flags: [{ name: 'team', value: 'ID', description: 'Team id', required: true }],
  async run(context) {
    const { tokens } = await context.clients.listTokens(idFlag(context, 'team'));
    context.print({
      tokens: tokens.map((token) => ({
        token_id: token.id,
        name: token.name,
        user_id: token.user_id,
        created_at: token.created_at,
        last_used_at: token.last_used_at || null,
      })),
    });
  },
};
