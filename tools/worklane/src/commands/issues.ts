import type { Schemas } from '@worklane/api-client';
import { idFlag, optionalIdFlag, optionalStringFlag, stringFlag, type Command, type CommandContext } from '../command';
import { API_DETAILS, ORGANIZATION_FLAG, PAGE_FLAGS, PROJECT_FLAG, TEAM_FLAG } from './api-flags';

type IssueCreate = Schemas['IssueCreate'];

const projectPath = (context: CommandContext) => ({
  team: idFlag(context, 'team'),
  organization: idFlag(context, 'organization'),
  project: idFlag(context, 'project'),
});

export const issueCreate: Command = {
  path: ['issue', 'create'],
  summary: 'Create an issue in a project (through the API)',
  details: API_DETAILS,
  flags: [
    TEAM_FLAG,
    ORGANIZATION_FLAG,
    PROJECT_FLAG,
    { name: 'title', value: 'TITLE', description: 'Issue title', required: true },
    { name: 'description', value: 'TEXT', description: 'Issue description' },
    { name: 'type', value: 'TYPE', description: 'bug, feature, task or improvement' },
    { name: 'status', value: 'STATUS', description: 'triage, backlog, todo, in_progress, in_review, done or cancelled' },
    { name: 'priority', value: 'PRIORITY', description: 'none, low, medium, high or urgent' },
  ],
  async run(context) {
    // The choices are sent as given: the API's 422 names a wrong one and lists the right ones.
    const body: IssueCreate = {
      title: stringFlag(context, 'title'),
      description: optionalStringFlag(context, 'description'),
      type: optionalStringFlag(context, 'type') as IssueCreate['type'],
      status: optionalStringFlag(context, 'status') as IssueCreate['status'],
      priority: optionalStringFlag(context, 'priority') as IssueCreate['priority'],
    };
    const issue = await context.api.call((api) =>
      api.POST('/teams/{team}/organizations/{organization}/projects/{project}/issues', { params: { path: projectPath(context) }, body }),
    );
    context.print(issue);
  },
};

export const issueList: Command = {
  path: ['issue', 'list'],
  summary: "List a project's issues, newest first, a page at a time (through the API)",
  details: API_DETAILS,
  flags: [TEAM_FLAG, ORGANIZATION_FLAG, PROJECT_FLAG, ...PAGE_FLAGS],
  async run(context) {
    const query = { limit: optionalIdFlag(context, 'limit'), cursor: optionalStringFlag(context, 'cursor') };
    const page = await context.api.call((api) =>
      api.GET('/teams/{team}/organizations/{organization}/projects/{project}/issues', { params: { path: projectPath(context), query } }),
    );
    context.print(page);
  },
};
