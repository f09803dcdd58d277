import { idFlag, stringFlag, type Command } from '../command';

export const organizationCreate: Command = {
  path: ['organization', 'create'],
  summary: 'Create an organization in a team (through the project service)',
  flags: [
    { name: 'team', value: 'ID', description: 'Team id', required: true },
    { name: 'name', value: 'NAME', description: 'Organization name', required: true },
  ],
  async run(context) {
    const organization = await context.clients.createOrganization({ team_id: idFlag(context, 'team'), name: stringFlag(context, 'name') });
    context.print({ organization_id: organization.id, team_id: organization.team_id, name: organization.name });
  },
};
