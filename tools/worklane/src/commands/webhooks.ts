import type { Schemas } from '@worklane/api-client';
import { idFlag, stringFlag, type Command } from '../command';
import { UsageError } from '../errors';
import { API_DETAILS, TEAM_FLAG } from './api-flags';

type WebhookEvent = Schemas['WebhookCreate']['events'][number];

export const webhookCreate: Command = {
  path: ['webhook', 'create'],
  summary: 'Subscribe an HTTPS endpoint to issue events (through the API)',
  details: `${API_DETAILS}\nThe signing secret is read from the first line of stdin with --secret-stdin, never from a flag.`,
  flags: [
    TEAM_FLAG,
    { name: 'url', value: 'URL', description: 'The https:// URL to POST the events to', required: true },
    { name: 'events', value: 'LIST', description: 'Comma-separated: issue.created, issue.updated', required: true },
    { name: 'secret-stdin', description: 'Read the signing secret (16 to 255 characters) from the first line of stdin' },
    { name: 'inactive', description: 'Create it switched off' },
  ],
  async run(context) {
    const events = stringFlag(context, 'events')
      .split(',')
      .map((event) => event.trim())
      .filter(Boolean) as WebhookEvent[];
    let secret: string | undefined;
    if (context.flags['secret-stdin'] === true) {
      secret = (await context.readStdin()).split(/\r?\n/)[0] ?? '';
      if (secret === '') throw new UsageError('--secret-stdin: stdin was empty');
    }
    // The events are sent as given: the API's 422 names an unknown one.
    const body = { url: stringFlag(context, 'url'), events, active: context.flags.inactive !== true, ...(secret !== undefined ? { secret } : {}) };
    const webhook = await context.api.call((api) => api.POST('/teams/{team}/webhooks', { params: { path: { team: idFlag(context, 'team') } }, body }));
    context.print(webhook);
  },
};

export const webhookList: Command = {
  path: ['webhook', 'list'],
  summary: "List a team's webhooks, newest first (never their secrets; through the API)",
  details: API_DETAILS,
  flags: [TEAM_FLAG],
  async run(context) {
    const list = await context.api.call((api) => api.GET('/teams/{team}/webhooks', { params: { path: { team: idFlag(context, 'team') } } }));
    context.print(list);
  },
};
