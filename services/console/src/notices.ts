import type { PageOptions } from './views/layout';

type Notice = NonNullable<PageOptions['notice']>;

/**
 * Confirmations shown after a redirect, named in the query string (`?notice=token-deleted`).
 * Only these fixed texts can appear, so a link cannot put words on the page.
 */
export const NOTICES: Record<string, Notice> = {
  'signed-out': { kind: 'info', text: 'You have signed out.' },
  'token-deleted': { kind: 'success', text: 'The token was deleted. The API refuses it from now on.' },
  'webhook-created': { kind: 'success', text: 'The webhook was added. Send a ping to check that your endpoint answers.' },
  'webhook-updated': { kind: 'success', text: 'The webhook was saved. Its new settings apply to the events from now on.' },
  'webhook-unchanged': { kind: 'info', text: 'Nothing was changed.' },
  'webhook-deleted': { kind: 'success', text: 'The webhook was deleted. Nothing more will be delivered to it.' },
  'webhook-activated': { kind: 'success', text: 'The webhook is active: events are delivered to it again.' },
  'webhook-deactivated': { kind: 'success', text: 'The webhook is inactive: nothing is delivered to it until you activate it.' },
  'ping-sent': { kind: 'success', text: 'A ping is on its way. Its delivery appears in the log below.' },
  'redelivery-queued': { kind: 'success', text: 'The delivery will be sent again. The new attempt appears in the log below.' },
};

export const noticeFrom = (query: unknown): Notice | undefined => (typeof query === 'string' && Object.hasOwn(NOTICES, query) ? NOTICES[query] : undefined);
