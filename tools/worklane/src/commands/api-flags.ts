import type { Flag } from '../command';

/** Flags every API command shares. */
export const TEAM_FLAG: Flag = { name: 'team', value: 'ID', description: 'Team id (that of WORKLANE_TOKEN)', required: true };
export const ORGANIZATION_FLAG: Flag = { name: 'organization', value: 'ID', description: 'Organization id', required: true };
export const PROJECT_FLAG: Flag = { name: 'project', value: 'ID', description: 'Project id', required: true };
export const PAGE_FLAGS: Flag[] = [
  { name: 'limit', value: 'N', description: 'Rows per page (the API has a default and a maximum)' },
  { name: 'cursor', value: 'CURSOR', description: 'The next_cursor of the previous page' },
];

/** What `--help` of every API command says about where it calls. */
export const API_DETAILS =
  'Calls the API (GATEWAY_URL, taken from a running `npm start` when not set) as the API token in WORKLANE_TOKEN,\n' + "and prints the API's JSON answer as one line.";
