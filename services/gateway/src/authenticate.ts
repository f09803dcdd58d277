import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { grpc, unaryCall } from '@worklane/grpc';
import type { Identity } from '@worklane/http';
import { promClient, type Logger, type Registry } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';

export type Authentication =
  | { outcome: 'authenticated'; identity: Identity }
  /** Missing, malformed, unknown or revoked: 401. */
  | { outcome: 'refused' }
  /** The token service could not answer: 503, never a guess. */
  | { outcome: 'unavailable' };

const REFUSED: Authentication = { outcome: 'refused' };
const UNAVAILABLE: Authentication = { outcome: 'unavailable' };

const UINT32_MAX = 0xffff_ffff;

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
  /**
   * Longest an acceptance is reused, in milliseconds (GATEWAY_AUTH_CACHE_TTL_MS); 0 disables the
   * cache. Without the token change feed it is also the lease asked for, which the token service
   * caps (TOKEN_CACHE_MAX_TTL_MS).
   */
  ttlMs: number;
  /** Most tokens remembered at once; the least recently used one makes room. */
  maxEntries?: number;
  /** A monotonic clock in milliseconds; performance.now() unless a test steps one. */
  now?: () => number;
  /** A TokenChangeFeed keeps this cache up to date (followChanges, forget, trustUntil). */
  followsChanges?: boolean;
}

export const DEFAULT_AUTH_CACHE_ENTRIES = 10_000;

/** A cached acceptance the feed asks the token service to check again. */
export interface TokenRenewal {
  tokenId: number;
  /** The cache key: the SHA-256 of the token value, base64. */
  key: string;
  /** The same digest in hex, as the token service stores it. */
  sha256: string;
}

/**
 * How often a token accepted from the cache is reported as used (with the feed's next call): the
 * token service records last use to the minute.
 */
export const USE_REPORT_INTERVAL_MS = 60_000;

/** One answer of the token service and the time, on the monotonic clock, its request was sent. */
interface Answer {
  result: Authentication;
  sentAt: number;
  /** A request that joined the call may take its acceptance only if it started before this. */
  shareUntil: number;
}

interface Entry {
  result: Authentication & { outcome: 'authenticated' };
  /** When it stops being reused, whatever else happens. */
  expiresAt: number;
  /** Kept on a lease of the token service: valid on its own. Else only while the feed is trusted. */
  leased: boolean;
  /** When its use was last recorded by the token service, or reported to it. */
  reportedAt: number;
  /** When a request that finds it asks the token service again in the background (unleased entries). */
  refreshAt: number;
}

/**
 * An unleased acceptance is checked again in the background once a request finds it between 75%
 * and 90% of the cache TTL (a point drawn per entry), and served meanwhile: a token in use never
 * waits for its check. The check rides on the token change feed's next call (takeRenewals,
 * renewed), a batch of tokens in one statement of the token service, instead of one Authenticate
 * call per token.
 */
const REFRESH_FROM = 0.75;
const REFRESH_SPREAD = 0.15;
/** After a background check that could not renew an entry, the next one waits this long. */
const REFRESH_RETRY_MS = 1_000;

/**
 * Answers API requests' token checks, from a cache when it can prove the answer still holds, else
 * by asking the token service; a refusal (401) or unavailability (503) is never cached.
 *
 * Two ways to keep a cached acceptance honest, so that once RevokeToken returns no request that
 * starts afterwards is accepted with the token (the README's Architecture section):
 *
 * - **The token change feed** (followsChanges, kept by TokenChangeFeed): the token service lists
 *   every token deleted or moved, in commit order, and grants each complete answer a lease that
 *   RevokeToken waits out. Acceptances asked without a lease (a read-only check in the token
 *   service) are kept up to ttlMs, and reused only while the last complete feed answer's lease,
 *   counted from when that answer was SENT, lasts (trustUntil). A revocation that committed
 *   before a feed answer's snapshot is in that answer, which drops the token here; one that
 *   committed after it waits out that answer's lease before it returns. An acceptance whose call
 *   was sent before the feed dropped its token, or before the feed started (followChanges), is
 *   used for its own request but never cached.
 * - **Leases per token**, without the feed or while it is not trusted: each acceptance is kept
 *   for the lease the token service granted on that token, from when the call was sent.
 *
 * Cached per SHA-256 of the bearer value (never the value itself). Concurrent misses for one
 * token share one call; a request that joined it after it could have been overtaken by a
 * revocation asks again.
 */
export class TokenAuthenticator {
  private lastWarning = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly followsChanges: boolean;
  /** Accepted tokens by hash, least recently used first. */
  private readonly cache = new Map<string, Entry>();
  /** The cache key of each cached token id, so the feed can drop a token by id. */
  private readonly keyOfToken = new Map<number, string>();
  private readonly inFlight = new Map<string, Promise<Answer>>();
  /** Feed answers before this (monotonic) time are not trusted: the cache may serve unleased entries only before it. */
  private trustedUntil = -Infinity;
  /** Calls sent before this were answered before the feed's cursor: their acceptances are not cached unleased. */
  private followingSince = Infinity;
  /** When the feed last dropped each token, kept while an answer sent before it may still arrive. */
  private readonly changedAt = new Map<number, number>();
  /** Tokens accepted from the cache whose use the feed has yet to report. */
  private used = new Set<number>();
  /** Cached acceptances due for their background check, by token id: the cache key they were found under. */
  private readonly renewals = new Map<number, string>();
  /** Requests answered from the cache, asked of the token service, and asked because the feed was not trusted. */
  private readonly lookups = { hit: 0, miss: 0, untrusted: 0 };
  /** Background checks answered: acceptances kept for another TTL, and dropped (their token gone or changed). */
  private readonly renewalOutcomes = { renewed: 0, dropped: 0 };

  constructor(
    private readonly client: tokenV1.TokenServiceClient,
    private readonly deadlineMs: number,
    private readonly logger: Logger,
    cache: AuthCacheOptions = { ttlMs: 0 },
  ) {
    this.ttlMs = Math.max(0, Math.floor(cache.ttlMs));
    this.maxEntries = Math.max(1, cache.maxEntries ?? DEFAULT_AUTH_CACHE_ENTRIES);
    this.now = cache.now ?? (() => performance.now());
    this.followsChanges = cache.followsChanges ?? false;
  }

  /** How many tokens are cached (expired ones included until they are next looked up or pushed out). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /** Whether unleased acceptances may be served now: the feed's last complete answer still holds. */
  get trusted(): boolean {
    return this.now() < this.trustedUntil;
  }

  async authenticate(authorization: string | undefined): Promise<Authentication> {
    const token = bearerToken(authorization);
    if (!token) return REFUSED;
    if (this.ttlMs === 0) return (await this.ask(token, 0)).result;

    const key = createHash('sha256').update(token).digest('base64');
    const startedAt = this.now();
    const cached = this.cache.get(key);
    if (cached) {
      if (startedAt >= cached.expiresAt) this.drop(key, cached);
      else if (cached.leased || startedAt < this.trustedUntil) {
        this.cache.delete(key);
        this.cache.set(key, cached); // most recently used
        this.lookups.hit += 1;
        if (!cached.leased) {
          if (startedAt - cached.reportedAt >= USE_REPORT_INTERVAL_MS) {
            cached.reportedAt = startedAt;
            this.used.add(cached.result.identity.tokenId);
          }
          if (startedAt >= cached.refreshAt) {
            cached.refreshAt = startedAt + REFRESH_RETRY_MS;
            this.renewals.set(cached.result.identity.tokenId, key);
          }
        }
        return cached.result;
      }
      // Else the feed is not trusted now: the entry waits for it, and this request asks.
      else this.lookups.untrusted += 1;
    }
    this.lookups.miss += 1;
    const pending = this.inFlight.get(key);
    if (pending) {
      const answer = await pending;
      if (answer.result.outcome !== 'authenticated' || startedAt < answer.shareUntil) return answer.result;
    }
    return (await this.lookUp(key, token)).result;
  }

  /**
   * worklane_gateway_auth_cache_lookups_total{result}: hit (answered from the cache), miss (asked
   * the token service; `untrusted` counts those among them that had a cached acceptance the feed
   * could not vouch for), worklane_gateway_auth_cache_renewals_total{result} (renewed, dropped)
   * and worklane_gateway_auth_cache_tokens.
   */
  registerMetrics(registry: Registry): void {
    const { lookups } = this;
    new promClient.Counter({
      name: 'worklane_gateway_auth_cache_lookups_total',
      help: 'Token checks of API requests: hit (answered from the cache), miss (asked the token service), untrusted (misses that had a cached acceptance the token change feed could not vouch for)',
      labelNames: ['result'],
      registers: [registry],
      collect() {
        this.reset();
        for (const result of Object.keys(lookups) as (keyof typeof lookups)[]) this.inc({ result }, lookups[result]);
      },
    });
    const { renewalOutcomes } = this;
    new promClient.Counter({
      name: 'worklane_gateway_auth_cache_renewals_total',
      help: 'Background checks of cached token acceptances, answered with the token change feed: renewed (kept for another TTL), dropped (the token is gone or changed)',
      labelNames: ['result'],
      registers: [registry],
      collect() {
        this.reset();
        for (const result of Object.keys(renewalOutcomes) as (keyof typeof renewalOutcomes)[]) this.inc({ result }, renewalOutcomes[result]);
      },
    });
    const { cache } = this;
    new promClient.Gauge({
      name: 'worklane_gateway_auth_cache_tokens',
      help: 'Tokens whose acceptance this gateway replica holds in its cache',
      registers: [registry],
      collect() {
        this.set(cache.size);
      },
    });
  }

  /** The feed starts (again) from a cursor read now: forget everything, cache what is asked from now on. */
  followChanges(): void {
    this.cache.clear();
    this.keyOfToken.clear();
    this.followingSince = this.now();
  }

  /** The feed listed these tokens as changed: drop them, and do not cache answers already on their way. */
  forget(tokenIds: Iterable<number>): void {
    const now = this.now();
    for (const tokenId of tokenIds) {
      // Deleted first, so the map stays in the order of the times it holds.
      this.changedAt.delete(tokenId);
      this.changedAt.set(tokenId, now);
      const key = this.keyOfToken.get(tokenId);
      const entry = key === undefined ? undefined : this.cache.get(key);
      if (key !== undefined && entry) this.drop(key, entry);
      else this.keyOfToken.delete(tokenId);
    }
    // An answer arrives within its deadline of being sent, or not at all.
    for (const [tokenId, at] of this.changedAt) {
      if (now - at <= 2 * this.deadlineMs + 1_000) break;
      this.changedAt.delete(tokenId);
    }
  }

  /** A complete feed answer holds until `until` (when it was sent plus the lease granted): unleased entries may be served until then. */
  trustUntil(until: number): void {
    if (until > this.trustedUntil) this.trustedUntil = until;
  }

  /** The tokens accepted from the cache since the last call, for the feed to report. */
  takeUsedTokens(max: number): number[] {
    const ids: number[] = [];
    for (const id of this.used) {
      if (ids.length >= max) break;
      ids.push(id);
      this.used.delete(id);
    }
    return ids;
  }

  /** Gives back used tokens a failed feed call could not report. */
  returnUsedTokens(ids: readonly number[]): void {
    for (const id of ids) this.used.add(id);
  }

  /**
   * The cached acceptances due for their check, for the feed's next call: each token's id and the
   * SHA-256 of its value (the cache key, in hex), never the value. One whose call fails is asked
   * again by the next request that finds it, a second later.
   */
  takeRenewals(max: number): TokenRenewal[] {
    const renewals: TokenRenewal[] = [];
    for (const [tokenId, key] of this.renewals) {
      if (renewals.length >= max) break;
      this.renewals.delete(tokenId);
      if (this.cache.get(key)?.result.identity.tokenId !== tokenId) continue;
      renewals.push({ tokenId, key, sha256: Buffer.from(key, 'base64').toString('hex') });
    }
    return renewals;
  }

  /**
   * The token service's answer to `asked`, sent at `sentAt`: each acceptance it still holds, with
   * the same team and user, is kept for another TTL from then; any other is dropped (its token is
   * gone, or changed). Entries the feed dropped or replaced since the call was sent are left alone.
   * Call it before `forget` with the same answer's changes, which were read after these.
   */
  renewed(asked: readonly TokenRenewal[], identities: readonly { token_id: number; team_id: number; user_id: number }[], sentAt: number): void {
    const held = new Map(identities.map((identity) => [Number(identity.token_id), identity]));
    for (const { tokenId, key } of asked) {
      const entry = this.cache.get(key);
      if (!entry || entry.leased || entry.result.identity.tokenId !== tokenId) continue;
      const changed = this.changedAt.get(tokenId);
      if (changed !== undefined && changed >= sentAt) continue;
      const found = held.get(tokenId);
      const { identity } = entry.result;
      if (!found || Number(found.team_id) !== identity.teamId || Number(found.user_id) !== identity.userId) {
        this.drop(key, entry);
        this.renewalOutcomes.dropped += 1;
        continue;
      }
      this.renewalOutcomes.renewed += 1;
      entry.expiresAt = Math.max(entry.expiresAt, sentAt + this.ttlMs);
      entry.refreshAt = this.refreshPoint(sentAt);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.cache.delete(key);
    const tokenId = entry.result.identity.tokenId;
    if (this.keyOfToken.get(tokenId) === key) this.keyOfToken.delete(tokenId);
  }

  /**
   * Asks the token service, shares the call with concurrent misses and caches an acceptance:
   * without a lease while the feed is trusted, else on a lease.
   */
  private lookUp(key: string, token: string): Promise<Answer> {
    const unleased = this.followsChanges && this.now() < this.trustedUntil;
    const call = this.ask(token, unleased ? 0 : this.ttlMs, unleased).then(({ result, sentAt, leaseMs }): Answer => {
      if (this.inFlight.get(key) === call) this.inFlight.delete(key);
      const existing = this.cache.get(key);
      if (result.outcome === 'refused' && existing) this.drop(key, existing);
      if (result.outcome !== 'authenticated') return { result, sentAt, shareUntil: -Infinity };
      const now = this.now();
      if (unleased) {
        const changed = this.changedAt.get(result.identity.tokenId);
        const current = sentAt >= this.followingSince && (changed === undefined || changed < sentAt) && now - sentAt <= this.deadlineMs;
        // This use is reported with the feed's next call, as the call asked (caller_reports_use).
        this.used.add(result.identity.tokenId);
        const refreshAt = this.refreshPoint(sentAt);
        if (current) this.remember(key, { result, expiresAt: sentAt + this.ttlMs, leased: false, reportedAt: now, refreshAt });
        // A request that joined after the call was sent may take it only if the feed vouches for it now.
        return { result, sentAt, shareUntil: current && now < this.trustedUntil ? Infinity : sentAt };
      }
      const expiresAt = sentAt + leaseMs;
      if (leaseMs > 0 && expiresAt > now) this.remember(key, { result, expiresAt, leased: true, reportedAt: sentAt, refreshAt: Infinity });
      return { result, sentAt, shareUntil: expiresAt };
    });
    this.inFlight.set(key, call);
    return call;
  }

  /** When an acceptance checked at `checkedAt` is next checked in the background: a point drawn between 75% and 90% of the TTL. */
  private refreshPoint(checkedAt: number): number {
    return checkedAt + this.ttlMs * (REFRESH_FROM + REFRESH_SPREAD * Math.random());
  }

  private remember(key: string, entry: Entry): void {
    const existing = this.cache.get(key);
    if (existing) this.drop(key, existing);
    while (this.cache.size >= this.maxEntries) {
      const [oldestKey, oldest] = this.cache.entries().next().value as [string, Entry];
      this.drop(oldestKey, oldest);
    }
    this.cache.set(key, entry);
    this.keyOfToken.set(entry.result.identity.tokenId, key);
  }

  private async ask(token: string, leaseAsked: number, reportsUse = false): Promise<{ result: Authentication; sentAt: number; leaseMs: number }> {
    // Taken before the call is made, so it is no later than the moment the request leaves.
    const sentAt = this.now();
    try {
      const identity = await unaryCall<tokenV1.Identity__Output>(
        (metadata, options, done) => this.client.Authenticate({ token, cache_ttl_ms: Math.min(leaseAsked, UINT32_MAX), caller_reports_use: reportsUse }, metadata, options, done),
        this.deadlineMs,
      );
      const leaseMs = Math.min(Number(identity.cache_ttl_ms) || 0, leaseAsked);
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
