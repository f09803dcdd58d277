import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { forbidden, unauthenticated } from './errors';

/** Who is calling, as established by the gateway (or console) from a token or a session. */
export interface Identity {
  teamId: number;
  userId: number;
  /** 0 for console sessions, which act without an API token. */
  tokenId: number;
}

export const IDENTITY_HEADERS = {
  team: 'x-worklane-team-id',
  user: 'x-worklane-user-id',
  token: 'x-worklane-token-id',
  timestamp: 'x-worklane-timestamp',
  signature: 'x-worklane-signature',
} as const;

const MAX_SKEW_MS = 60_000;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      identity?: Identity;
    }
  }
}

function signature(key: string, method: string, url: string, identity: Identity, timestamp: string): string {
  return createHmac('sha256', key)
    .update([method.toUpperCase(), url, identity.teamId, identity.userId, identity.tokenId, timestamp].join('\n'))
    .digest('hex');
}

/** The headers that carry `identity` for one request (method and URL as the service will see them). */
export function signIdentity(key: string, method: string, url: string, identity: Identity, now = Date.now()): Record<string, string> {
  const timestamp = String(now);
  return {
    [IDENTITY_HEADERS.team]: String(identity.teamId),
    [IDENTITY_HEADERS.user]: String(identity.userId),
    [IDENTITY_HEADERS.token]: String(identity.tokenId),
    [IDENTITY_HEADERS.timestamp]: timestamp,
    [IDENTITY_HEADERS.signature]: signature(key, method, url, identity, timestamp),
  };
}

const header = (headers: Record<string, string | string[] | undefined>, name: string) => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

const positiveInteger = (value: string | undefined) => (value && /^\d{1,15}$/.test(value) ? Number(value) : undefined);

/** The identity of a request if its headers are present, well formed, fresh and signed with `key`. */
export function verifyIdentity(
  key: string,
  method: string,
  url: string,
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): Identity | undefined {
  const teamId = positiveInteger(header(headers, IDENTITY_HEADERS.team));
  const userId = positiveInteger(header(headers, IDENTITY_HEADERS.user));
  const tokenId = positiveInteger(header(headers, IDENTITY_HEADERS.token));
  const timestamp = header(headers, IDENTITY_HEADERS.timestamp);
  const given = header(headers, IDENTITY_HEADERS.signature);
  if (teamId === undefined || userId === undefined || tokenId === undefined || !timestamp || !given) return undefined;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return undefined;
  const identity = { teamId, userId, tokenId };
  const expected = Buffer.from(signature(key, method, url, identity, timestamp), 'hex');
  const actual = Buffer.from(given, 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return identity;
}

/** Refuses (401) any request without a valid signed identity and exposes it as `req.identity`. */
export function requireIdentity(key: string) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const identity = verifyIdentity(key, req.method, req.originalUrl, req.headers);
    if (!identity) return next(unauthenticated());
    req.identity = identity;
    next();
  };
}

/**
 * The `{team}` path parameter must be the caller's team (403). The gateway checks this too; the
 * service checks again so that a gateway mistake cannot expose another team's data.
 */
export function requireTeam(req: Request): Identity {
  const identity = req.identity;
  if (!identity) throw unauthenticated();
  if (String(req.params.team) !== String(identity.teamId)) throw forbidden();
  return identity;
}
