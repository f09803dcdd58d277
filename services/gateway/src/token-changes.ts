import { unaryCall } from '@worklane/grpc';
import { BackgroundWorker, type Logger, type Registry } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import type { TokenAuthenticator } from './authenticate';

/** Used tokens reported per call: the token service takes up to 10,000. */
export const USED_TOKENS_PER_CALL = 5_000;
/** Cached acceptances renewed per call: the token service takes up to 10,000. */
export const RENEWALS_PER_CALL = 5_000;

export interface TokenChangeFeedOptions {
  /** The token service (ListTokenChanges). */
  client: Pick<tokenV1.TokenServiceClient, 'ListTokenChanges'>;
  /** The cache it keeps up to date. */
  authenticator: Pick<TokenAuthenticator, 'followChanges' | 'forget' | 'trustUntil' | 'takeUsedTokens' | 'returnUsedTokens' | 'takeRenewals' | 'renewed'>;
  /** Pause between reads (GATEWAY_TOKEN_CHANGES_INTERVAL_MS). */
  intervalMs: number;
  /** Deadline of one call. */
  timeoutMs: number;
  logger: Logger;
  registry?: Registry;
  /** A monotonic clock in milliseconds, the authenticator's. */
  now?: () => number;
}

/**
 * Follows the token service's token change feed for this replica's authentication cache: every
 * `intervalMs`, reads the changes since its cursor (all pages), drops each changed token from the
 * cache, and then lets the cache serve unleased acceptances until the lease of that read runs out,
 * counted from when its first call was sent. With the same call it reports the tokens accepted
 * from the cache, so the token service records their last use, and has the acceptances due for
 * their background check checked again (renewals), all of them in one statement.
 *
 * When the token service cannot answer, the lease runs out and the cache falls back to asking (on
 * leases per token); the failure is counted (worklane_worker_failures_total{worker="token
 * changes"}) and logged, attempts backing off to 2 s.
 */
export class TokenChangeFeed {
  private readonly worker: BackgroundWorker;
  private readonly now: () => number;
  /** The next change to read; 0 until the first answer gives one. */
  private cursor = 0;

  constructor(private readonly options: TokenChangeFeedOptions) {
    this.now = options.now ?? (() => performance.now());
    this.worker = new BackgroundWorker({
      name: 'token changes',
      logger: options.logger,
      registry: options.registry,
      idleMs: options.intervalMs,
      minBackoffMs: options.intervalMs,
      maxBackoffMs: Math.max(options.intervalMs, 2_000),
      pass: () => this.pass(),
    });
  }

  start(): void {
    this.worker.start();
  }

  stop(deadlineMs?: number): Promise<boolean> {
    return this.worker.stop(deadlineMs);
  }

  /** One complete read of the feed; throws when a call fails (the cache then stops trusting it once its lease runs out). */
  async pass(): Promise<'idle'> {
    const { authenticator } = this.options;
    // Taken before the first call leaves: the lease granted counts from no later than this.
    const sentAt = this.now();
    let validMs: number | undefined;
    // Renewals go with the first call only: its changes are read after them.
    let renew = authenticator.takeRenewals(RENEWALS_PER_CALL);
    for (;;) {
      const used = authenticator.takeUsedTokens(USED_TOKENS_PER_CALL);
      let answer: tokenV1.ListTokenChangesResponse__Output;
      try {
        answer = await this.call({ cursor: this.cursor, used_token_ids: used, renew: renew.map(({ tokenId, sha256 }) => ({ token_id: tokenId, token_sha256: sha256 })) });
      } catch (error) {
        authenticator.returnUsedTokens(used);
        throw error;
      }
      // A new cursor, or one older than what the token service keeps: start again from nothing.
      if (this.cursor === 0 || answer.reset) {
        if (answer.reset) this.options.logger.warn('token changes were missed (the feed moved past this replica’s cursor); forgetting every cached token');
        authenticator.followChanges();
      }
      // Before this answer's changes, which the token service read after the renewals.
      if (renew.length > 0 && answer.renew_answered) authenticator.renewed(renew, answer.renewed, sentAt);
      renew = [];
      authenticator.forget(answer.token_ids.map(Number));
      this.cursor = Number(answer.cursor);
      validMs ??= Number(answer.cache_valid_ms) || 0;
      if (!answer.more) break;
    }
    if (validMs > 0) authenticator.trustUntil(sentAt + validMs);
    return 'idle';
  }

  private call(request: tokenV1.ListTokenChangesRequest): Promise<tokenV1.ListTokenChangesResponse__Output> {
    const { client, timeoutMs } = this.options;
    return unaryCall<tokenV1.ListTokenChangesResponse__Output>((metadata, options, done) => client.ListTokenChanges(request, metadata, options, done), timeoutMs);
  }
}
