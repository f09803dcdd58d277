import { idFlag, optionalIdFlag, optionalStringFlag, stringFlag, type Command, type CommandContext } from '../command';
import { API_DETAILS, ORGANIZATION_FLAG, PAGE_FLAGS, TEAM_FLAG } from './api-flags';

const organizationPath = (context: CommandContext) => ({ team: idFlag(context, 'team'), organization: idFlag(context, 'organization') });

export const organizationList: Command = {
  path: ['organization', 'list'],
  summary: "List a team's organizations, a page at a time (through the API)",
  details: API_DETAILS,
  flags: [TEAM_FLAG, ...PAGE_FLAGS],
  async run(context) {
    const query = { limit: optionalIdFlag(context, 'limit'), cursor: optionalStringFlag(context, 'cursor') };
    const page = await context.api.call((api) => api.GET('/teams/{team}/organizations', { params: { path: { team: idFlag(context, 'team') }, query } }));
    context.print(page);
  },
};

export const projectCreate: Command = {
  path: ['project', 'create'],
  summary: 'Create a project in an organization (through the API)',
  details: API_DETAILS,
  flags: [
    TEAM_FLAG,
    ORGANIZATION_FLAG,
    { name: 'name', value: 'NAME', description: 'Project name', required: true },
    { name: 'description', value: 'TEXT', description: 'What the project is' },
    { name: 'github-repository', value: 'OWNER/NAME', description: 'Its GitHub repository' },
  ],
  async run(context) {
    const body = {
      name: stringFlag(context, 'name'),
      description: optionalStringFlag(context, 'description'),
      github_repository: optionalStringFlag(context, 'github-repository'),
    };
    const project = await context.api.call((api) => api.POST('/teams/{team}/organizations/{organization}/projects', { params: { path: organizationPath(context) }, body }));
    context.print(project);
  },
};

export const projectList: Command = {
  path: ['project', 'list'],
  summary: "List an organization's projects (through the API)",
  details: API_DETAILS,
  flags: [TEAM_FLAG, ORGANIZATION_FLAG, ...PAGE_FLAGS],
  async run(context) {
    const query = { limit: optionalIdFlag(context, 'limit'), cursor: optionalStringFlag(context, 'cursor') };
    const list = await context.api.call((api) => api.GET('/teams/{team}/organizations/{organization}/projects', { params: { path: organizationPath(context), query } }));
    context.print(list);
  },
};
