import { unaryCall } from '@worklane/grpc';
import { BackgroundWorker, promClient, type Logger, type Registry } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import type { RateLimiter } from './rate-limit';

/** Keys per SyncRateLimits call: well under the 10,000 the token service takes, so a call stays small. */
export const SYNC_KEYS_PER_CALL = 5_000;

const UINT32_MAX = 0xffff_ffff;

type Scope = 'token' | 'team';
const PROTO_SCOPES: Record<Scope, tokenV1.RateLimitScope> = { token: 'RATE_LIMIT_SCOPE_TOKEN', team: 'RATE_LIMIT_SCOPE_TEAM' };
const SCOPES: Partial<Record<string, Scope>> = { RATE_LIMIT_SCOPE_TOKEN: 'token', RATE_LIMIT_SCOPE_TEAM: 'team' };

export interface RateLimitSyncOptions {
  /** The token service (SyncRateLimits). */
  client: Pick<tokenV1.TokenServiceClient, 'SyncRateLimits'>;
  /** The per-token and per-team allowances of this replica. */
  limiters: Record<Scope, RateLimiter>;
  /** Pause between syncs (RATE_LIMIT_SYNC_INTERVAL_MS); also the least time between two failure logs. */
  intervalMs: number;
  /** Deadline of one call (RATE_LIMIT_SYNC_TIMEOUT_MS). */
  timeoutMs: number;
  logger: Logger;
  registry?: Registry;
}

/**
 * Shares this replica's API rate limits with the other replicas, without a round trip per request:
 * requests are decided from the local buckets only, and every `intervalMs` this sends the token
 * service what each key (token, team) spent here since the previous sync, together with the keys
 * that only want to learn theirs. The token service adds the spending to the key's bucket shared by
 * every replica, in PostgreSQL, and answers its level; each local bucket then holds that level less
 * what was spent here since the sync was sent. All replicas together allow the configured rate,
 * and overshoot it by at most what they allow in one interval.
 *
 * When the token service cannot answer, nothing is refused for it: the spending is kept for the
 * next sync and every replica goes on limiting with its own buckets (the allowance per replica).
 * The failure is counted (worklane_worker_failures_total{worker="rate limit sync"}) and logged
 * once per attempt, attempts being at least `intervalMs` apart and backing off to 5 s.
 */
export class RateLimitSync {
  private readonly worker: BackgroundWorker;
  private failing = false;

  constructor(private readonly options: RateLimitSyncOptions) {
    for (const limiter of Object.values(options.limiters)) limiter.share();
    this.worker = new BackgroundWorker({
      name: 'rate limit sync',
      logger: options.logger,
      registry: options.registry,
      idleMs: options.intervalMs,
      minBackoffMs: options.intervalMs,
      maxBackoffMs: Math.max(options.intervalMs, 5_000),
      pass: () => this.pass(),
    });
    if (options.registry) {
      const { limiters } = options;
      new promClient.Gauge({
        name: 'worklane_gateway_rate_limit_keys',
        help: 'Tokens and teams with a rate-limit bucket on this replica (those not full), by scope',
        labelNames: ['scope'],
        registers: [options.registry],
        collect() {
          for (const scope of Object.keys(limiters) as Scope[]) this.set({ scope }, limiters[scope].size);
        },
      });
    }
  }

  start(): void {
    this.worker.start();
  }

  stop(deadlineMs?: number): Promise<boolean> {
    return this.worker.stop(deadlineMs);
  }

  /** One sync of every key; throws when a call fails, after giving its spending back. */
  async pass(): Promise<'idle'> {
    const { limiters } = this.options;
    const usage: { scope: Scope; id: number; spent: number }[] = [];
    for (const scope of Object.keys(limiters) as Scope[]) {
      for (const [id, spent] of limiters[scope].takeUsage()) usage.push({ scope, id, spent });
    }
    for (let start = 0; start < usage.length; start += SYNC_KEYS_PER_CALL) {
      const chunk = usage.slice(start, start + SYNC_KEYS_PER_CALL);
      try {
        await this.sync(chunk);
      } catch (error) {
        // Reported with the next sync; meanwhile the local buckets have already counted it.
        for (const entry of usage.slice(start)) limiters[entry.scope].returnUsage([[entry.id, entry.spent]]);
        this.failing = true;
        throw error;
      }
    }
    for (const limiter of Object.values(limiters)) limiter.sweep();
    if (this.failing) {
      this.failing = false;
      this.options.logger.info('rate limits shared again with the other gateway replicas');
    }
    return 'idle';
  }

  private async sync(chunk: readonly { scope: Scope; id: number; spent: number }[]): Promise<void> {
    const { limiters, client, timeoutMs } = this.options;
    const request: tokenV1.SyncRateLimitsRequest = {
      usage: chunk.map(({ scope, id, spent }) => {
        const { perSecond, burst } = limiters[scope].allowance;
        return { scope: PROTO_SCOPES[scope], id, spent: Math.min(UINT32_MAX, Math.ceil(spent)), per_second: perSecond, burst: Math.min(UINT32_MAX, burst) };
      }),
    };
    const response = await unaryCall<tokenV1.SyncRateLimitsResponse__Output>((metadata, options, done) => client.SyncRateLimits(request, metadata, options, done), timeoutMs);
    for (const level of response.levels) {
      const scope = SCOPES[level.scope];
      if (scope) limiters[scope].applyShared(level.id, level.level);
    }
  }
}
