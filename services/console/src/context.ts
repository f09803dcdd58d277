import type { Request, Response } from 'express';
import type { Identity } from '@worklane/http';
import type { Membership } from './clients/accounts';
import type { SafeHtml } from './html';
import type { Assets, PageContext } from './views/layout';

/** The signed-in person behind a request: their session and the teams they belong to. */
export interface Viewer {
  sessionId: string;
  userId: number;
  csrfToken: string;
  memberships: Membership[];
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      viewer?: Viewer;
      /** The team of a /teams/:team page, once the viewer is known to be a member. */
      team?: Membership;
    }
  }
}

/** A page that stops with a status and an explanation for a person. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'PageError';
  }
}

export const pageNotFound = () => new PageError(404, 'Page not found', 'There is nothing here. It may have been deleted, or it belongs to a team you are not a member of.');

export const formExpired = () => new PageError(403, 'This form has expired', 'For your safety the form could not be accepted. Go back, reload the page and try again.');

export function pageContext(req: Request, assets: Assets, section?: PageContext['section']): PageContext {
  return {
    assets,
    csrfToken: req.viewer?.csrfToken,
    memberships: req.viewer?.memberships,
    team: req.team,
    section,
  };
}

/** The identity the services see for this page: the person, in the page's team, by session. */
export function identityOf(req: Request): Identity {
  if (!req.viewer || !req.team) throw new Error('identityOf called outside a team page');
  return { teamId: req.team.team_id, userId: req.viewer.userId, tokenId: 0 };
}

export function sendPage(res: Response, status: number, body: SafeHtml): void {
  res.status(status).type('html').send(body.value);
}

/**
 * Where to go after signing in: only a path of this site (never `//host` or a URL), so the
 * sign-in page cannot be used to send people elsewhere.
 */
export function safeNext(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 1000) return undefined;
  return /^\/(?![/\\])[A-Za-z0-9/_\-.?=&%]*$/.test(value) ? value : undefined;
}

/** Reads a form field that should be a single string; anything else counts as empty. */
export function formString(body: unknown, name: string): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/** Reads a form field that may repeat (checkboxes) as a list of strings. */
export function formList(body: unknown, name: string): string[] {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}
