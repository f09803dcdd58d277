import { sign, verify } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { PublicKeys, Signer } from '@worklane/config';
import { forbidden, unauthenticated } from './errors';

/**
 * Who is calling, as established by the gateway (from an API token) or the console (from a
 * session). Only these two mint identities: each signs with its own Ed25519 private key, and
 * the services hold only their public keys, so no service can forge a caller for another.
 */
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
  /** Which principal signed the identity: `gateway` or `console`. */
  issuer: 'x-worklane-identity-issuer',
  signature: 'x-worklane-signature',
} as const;

const MAX_SKEW_MS = 60_000;

/** The principals that mint caller identities: the gateway (API tokens) and the console (sessions). */
export const IDENTITY_ISSUERS = ['gateway', 'console'] as const;

/** The identity issuers' keys among a service's trusted public keys. */
export function identityIssuersOf(keys: PublicKeys): PublicKeys {
  return Object.fromEntries(IDENTITY_ISSUERS.filter((name) => Object.hasOwn(keys, name)).map((name) => [name, keys[name] as PublicKeys[string]]));
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      identity?: Identity;
    }
  }
}

// The domain prefix keeps an identity signature from ever passing as a gRPC call signature.
const payload = (issuer: string, method: string, url: string, identity: Identity, timestamp: string) =>
  Buffer.from(['worklane-identity-v1', issuer, method.toUpperCase(), url, identity.teamId, identity.userId, identity.tokenId, timestamp].join('\n'));

/** The headers that carry `identity` for one request (method and URL as the service will see them). */
export function signIdentity(signer: Signer, method: string, url: string, identity: Identity, now = Date.now()): Record<string, string> {
  const timestamp = String(now);
  return {
    [IDENTITY_HEADERS.team]: String(identity.teamId),
    [IDENTITY_HEADERS.user]: String(identity.userId),
    [IDENTITY_HEADERS.token]: String(identity.tokenId),
    [IDENTITY_HEADERS.timestamp]: timestamp,
    [IDENTITY_HEADERS.issuer]: signer.name,
    [IDENTITY_HEADERS.signature]: sign(null, payload(signer.name, method, url, identity, timestamp), signer.key).toString('base64url'),
  };
}

const header = (headers: Record<string, string | string[] | undefined>, name: string) => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

const positiveInteger = (value: string | undefined) => (value && /^\d{1,15}$/.test(value) ? Number(value) : undefined);

/** The identity of a request if its headers are present, well formed, fresh and signed by one of `issuers`. */
export function verifyIdentity(issuers: PublicKeys, method: string, url: string, headers: Record<string, string | string[] | undefined>, now = Date.now()): Identity | undefined {
  const teamId = positiveInteger(header(headers, IDENTITY_HEADERS.team));
  const userId = positiveInteger(header(headers, IDENTITY_HEADERS.user));
  const tokenId = positiveInteger(header(headers, IDENTITY_HEADERS.token));
  const timestamp = header(headers, IDENTITY_HEADERS.timestamp);
  const issuer = header(headers, IDENTITY_HEADERS.issuer);
  const given = header(headers, IDENTITY_HEADERS.signature);
  if (teamId === undefined || userId === undefined || tokenId === undefined || !timestamp || !issuer || !given) return undefined;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return undefined;
  const key = Object.hasOwn(issuers, issuer) ? issuers[issuer] : undefined;
  if (!key || !/^[A-Za-z0-9_-]{86}$/.test(given)) return undefined;
  const identity = { teamId, userId, tokenId };
  return verify(null, payload(issuer, method, url, identity, timestamp), key, Buffer.from(given, 'base64url')) ? identity : undefined;
}

/** Refuses (401) any request without an identity signed by one of `issuers`, and exposes it as `req.identity`. */
export function requireIdentity(issuers: PublicKeys) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const identity = verifyIdentity(issuers, req.method, req.originalUrl, req.headers);
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
