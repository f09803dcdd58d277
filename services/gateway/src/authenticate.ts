import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { grpc, unaryCall } from '@worklane/grpc';
import type { Identity } from '@worklane/http';
import type { Logger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';

export type Authentication =
  | { outcome: 'authenticated'; identity: Identity }
  /** Missing, malformed, unknown or revoked: 401. */
  | { outcome: 'refused' }
  /** The token service could not answer: 503, never a guess. */
  | { outcome: 'unavailable' };

const REFUSED: Authentication = { outcome: 'refused' };
const UNAVAILABLE: Authentication = { outcome: 'unavailable' };

/** RFC 6750 `Bearer <b64token>`; anything longer than 256 characters cannot be a Worklane token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,256}=*) *$/i;

/** The token of an `Authorization: Bearer` header, or undefined when there is none or it is malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return BEARER.exec(header)?.[1];
}

/** What the server answers when our own call signature is refused: a key mismatch, not a bad token. */
const UNSIGNED_CALLER = 'caller is not signed';

export interface AuthCacheOptions {
  /** Lease to ask the token service for, in milliseconds (GATEWAY_AUTH_CACHE_TTL_MS); 0 disables the cache. */
  ttlMs: number;
  /** Most tokens remembered at once; the least recently used one makes room. */
  maxEntries?: number;
  /** A monotonic clock in milliseconds; performance.now() unless a test steps one. */
  now?: () => number;
}

export const DEFAULT_AUTH_CACHE_ENTRIES = 10_000;

/** One answer of the token service and the time, on the monotonic clock, its request was sent. */
interface Answer {
  result: Authentication;
  sentAt: number;
  /** The lease granted (0: none), capped by what we asked for. */
  leaseMs: number;
}

/**
 * Asks the token service about every request it cannot answer from a cache that is guaranteed
 * fresh (the README's Architecture section: leases and revocation). The token service grants each successful authentication a lease
 * (Identity.cache_ttl_ms) that it records on the token row, and RevokeToken does not return before
 * that lease has run out by the database's clock. The lease starts when the database looks the
 * token up, which is after this gateway sent the call, so an entry kept for the lease measured
 * from the moment the call was SENT, on a monotonic clock, always expires before the revoking
 * call can return: a request that starts after it returns never finds the token cached.
 *
 * Only acceptances are cached, per SHA-256 of the bearer value (never the value itself):
 * refusals (401) and unavailability (503) are asked again on the next request. Concurrent misses
 * for one token share one call; a request that joined it after the answer's lease ran out (which
 * a revocation could have waited out) does not take its acceptance and asks again.
 */
export class TokenAuthenticator {
  private lastWarning = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Accepted tokens by hash, least recently used first, each with its expiry on the monotonic clock. */
  private readonly cache = new Map<string, { result: Authentication; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<Answer>>();

  constructor(
    private readonly client: tokenV1.TokenServiceClient,
    private readonly deadlineMs: number,
    private readonly logger: Logger,
    cache: AuthCacheOptions = { ttlMs: 0 },
  ) {
    this.ttlMs = Math.max(0, Math.floor(cache.ttlMs));
    this.maxEntries = Math.max(1, cache.maxEntries ?? DEFAULT_AUTH_CACHE_ENTRIES);
    this.now = cache.now ?? (() => performance.now());
  }

  /** How many tokens are cached (expired ones included until they are next looked up or pushed out). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  async authenticate(authorization: string | undefined): Promise<Authentication> {
    const token = bearerToken(authorization);
    if (!token) return REFUSED;
    if (this.ttlMs === 0) return (await this.ask(token)).result;

    const key = createHash('sha256').update(token).digest('base64');
    const startedAt = this.now();
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      if (startedAt < cached.expiresAt) {
        this.cache.set(key, cached); // most recently used
        return cached.result;
      }
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      const answer = await pending;
      // The shared call may have been answered before a revocation that returned before this
      // request started; its lease bounds how late that can be.
      if (answer.result.outcome !== 'authenticated' || startedAt < answer.sentAt + answer.leaseMs) return answer.result;
    }
    return (await this.lookUp(key, token)).result;
  }

  /** Asks the token service, shares the call with concurrent misses and caches an acceptance for its lease. */
  private lookUp(key: string, token: string): Promise<Answer> {
    const call = this.ask(token).then((answer) => {
      if (this.inFlight.get(key) === call) this.inFlight.delete(key);
      if (answer.result.outcome === 'refused') this.cache.delete(key);
      const expiresAt = answer.sentAt + answer.leaseMs;
      if (answer.result.outcome === 'authenticated' && answer.leaseMs > 0 && expiresAt > this.now()) this.remember(key, answer.result, expiresAt);
      return answer;
    });
    this.inFlight.set(key, call);
    return call;
  }

  private remember(key: string, result: Authentication, expiresAt: number): void {
    this.cache.delete(key);
    while (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
    this.cache.set(key, { result, expiresAt });
  }

  private async ask(token: string): Promise<Answer> {
    // Taken before the call is made, so it is no later than the moment the request leaves.
    const sentAt = this.now();
    try {
      const identity = await unaryCall<tokenV1.Identity__Output>(
        (metadata, options, done) => this.client.Authenticate({ token, cache_ttl_ms: this.ttlMs }, metadata, options, done),
        this.deadlineMs,
      );
      const leaseMs = Math.min(Number(identity.cache_ttl_ms) || 0, this.ttlMs);
      return {
        result: { outcome: 'authenticated', identity: { teamId: identity.team_id, userId: identity.user_id, tokenId: identity.token_id } },
        sentAt,
        leaseMs,
      };
    } catch (error) {
      const rpc = error as grpc.ServiceError;
      if (rpc.code === grpc.status.UNAUTHENTICATED && rpc.details !== UNSIGNED_CALLER) return { result: REFUSED, sentAt, leaseMs: 0 };
      // Once a second at most: an outage fails every request, and one line says so.
      if (Date.now() - this.lastWarning > 1_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ code: grpc.status[rpc.code] ?? rpc.code, details: rpc.details }, 'token service could not authenticate; failing closed');
      }
      return { result: UNAVAILABLE, sentAt, leaseMs: 0 };
    }
  }
}
