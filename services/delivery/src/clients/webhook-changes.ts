import {
  DeliverPolicy,
  JetStreamApiError,
  WEBHOOK_CHANGES_STREAM,
  WEBHOOK_CHANGES_SUBJECT,
  readWebhookChange,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type WebhookChange,
} from '@worklane/messaging';
import { promClient, type Logger } from '@worklane/observability';

/** Why every cached webhook was forgotten at once. */
export type ForgetReason = 'start' | 'reconnect' | 'gap' | 'unreadable' | 'restart';

export interface ChangeListener {
  /** A team's webhooks changed: what is known of them is stale. */
  changed(change: WebhookChange): void;
  /** Notices may have been missed: nothing cached can be trusted. */
  forgetAll(reason: ForgetReason): void;
}

/** What the cache asks before it answers from memory. */
export interface ChangeBarrier {
  /**
   * True once every change notice stored before this call has been applied, so a cached answer
   * is as current as the webhook service's own answer would have been at the moment of the call;
   * false when that cannot be known now (NATS unavailable, the follower restarting, too slow):
   * the caller then asks the webhook service.
   */
  caughtUp(): Promise<boolean>;
}

export interface WebhookChangeFeedOptions {
  js: JetStreamClient;
  /** Answers within the sync timeout (a JetStreamManager made with `timeout`). */
  jsm: JetStreamManager;
  listener: ChangeListener;
  logger: Logger;
  registry: promClient.Registry;
  /** How long a check waits for the stream position and for the notices up to it (DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS). */
  syncTimeoutMs: number;
  /**
   * Stream position requests out at once, at most (DELIVERY_WEBHOOK_CACHE_SYNC_CHECKS). Each read
   * that begins after the requests under way were sent needs one of its own; the reads of one
   * moment share it, so this bounds only a burst spread over many moments.
   */
  maxChecksInFlight: number;
  /** Declares the WEBHOOK_CHANGES stream (when it has gone missing). */
  declare: () => Promise<unknown>;
  /** Pause before following again after the follower stopped or could not start. */
  restartDelayMs?: number;
}

interface Waiter {
  sequence: number;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

/**
 * Follows the WEBHOOK_CHANGES stream from its end with an ordered consumer, handing each notice to
 * the listener as it arrives (synchronously, in the NATS client's read loop), and answers the
 * cache's barrier: the stream's last sequence, asked of its leader after the barrier was called,
 * then a wait until the follower has applied that far. A notice acknowledged before an API call
 * was answered therefore reaches the cache before any read that started after that answer.
 */
export class WebhookChangeFeed implements ChangeBarrier {
  /** Stream sequence of the last notice applied; every notice at or below it has been applied. */
  private applied = 0;
  private messages: ConsumerMessages | undefined;
  private following = false;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  /** The check that the reads of this moment share; its stream request is sent once they have all joined it. */
  private joining: Promise<boolean> | undefined;
  /** Checks whose stream request is out (maxChecksInFlight at most). */
  private checksOut = 0;
  /** Checks waiting for one of those to end. */
  private readonly checksQueued: (() => void)[] = [];
  private readonly checks: promClient.Counter<'outcome'>;

  constructor(private readonly options: WebhookChangeFeedOptions) {
    this.checks = new promClient.Counter({
      name: 'worklane_delivery_webhook_cache_syncs_total',
      help: 'Checks that every webhook change notice stored before a cache read was applied: current (nothing to wait for), waited, failed (the read went to the webhook service)',
      labelNames: ['outcome'],
      registers: [options.registry],
    });
  }

  /** Starts following; never throws (a failure is retried, the cache is bypassed meanwhile). */
  start(): Promise<void> {
    this.starting ??= this.follow().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** The connection came back: notices may have been lost with it. */
  reconnected(): void {
    this.options.listener.forgetAll('reconnect');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    this.following = false;
    this.messages?.stop();
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    await this.starting;
  }

  caughtUp(): Promise<boolean> {
    // A check already out asked for the stream position before this call, so it may miss a notice
    // acknowledged just before the call: this read needs a request sent from now on. It is sent at
    // once, not after the checks under way (a read waits one round trip, never the rest of another
    // check first), and the reads that begin in the same moment (before its request leaves) share it.
    this.joining ??= Promise.resolve().then(() => {
      this.joining = undefined;
      return this.checkWhenFree();
    });
    return this.joining;
  }

  /** One check, once fewer than maxChecksInFlight are out (it then takes the slot of the one that ended). */
  private async checkWhenFree(): Promise<boolean> {
    if (this.checksOut >= this.options.maxChecksInFlight) await new Promise<void>((resolve) => this.checksQueued.push(resolve));
    else this.checksOut += 1;
    try {
      return await this.check();
    } finally {
      const next = this.checksQueued.shift();
      if (next) next();
      else this.checksOut -= 1;
    }
  }

  private async check(): Promise<boolean> {
    if (!this.following) {
      this.checks.inc({ outcome: 'failed' });
      return false;
    }
    let last: number;
    try {
      last = (await this.options.jsm.streams.info(WEBHOOK_CHANGES_STREAM)).state.last_seq;
    } catch (error) {
      this.checks.inc({ outcome: 'failed' });
      if (error instanceof JetStreamApiError) {
        this.options.logger.warn({ err: error }, 'WEBHOOK_CHANGES unreadable; following it again');
        this.restart();
      }
      return false;
    }
    if (last < this.applied) {
      // The stream was made again from nothing: its sequences mean nothing to the follower.
      this.options.logger.warn({ last, applied: this.applied }, 'WEBHOOK_CHANGES went back in sequence; following it again');
      this.checks.inc({ outcome: 'failed' });
      this.restart();
      return false;
    }
    if (last <= this.applied) {
      this.checks.inc({ outcome: 'current' });
      return true;
    }
    const reached = await new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        sequence: last,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((other) => other !== waiter);
          resolve(false);
        }, this.options.syncTimeoutMs),
      };
      this.waiters.push(waiter);
    });
    this.checks.inc({ outcome: reached ? 'waited' : 'failed' });
    return reached;
  }

  private async follow(): Promise<void> {
    const { js, jsm, logger, listener } = this.options;
    try {
      await this.options.declare();
      const start = (await jsm.streams.info(WEBHOOK_CHANGES_STREAM)).state.last_seq;
      const consumer = await js.consumers.get(WEBHOOK_CHANGES_STREAM, {
        filter_subjects: [WEBHOOK_CHANGES_SUBJECT],
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: start + 1,
      });
      if (this.stopped) return;
      // Nothing cached before this point can be checked against the notices that follow it.
      listener.forgetAll('start');
      this.applied = start;
      const messages = await consumer.consume({ callback: (message) => this.apply(message.seq, message.data) });
      this.messages = messages;
      this.following = true;
      logger.info({ from: start + 1 }, 'following WEBHOOK_CHANGES');
      void messages.closed().then((error) => {
        if (this.messages !== messages) return;
        this.following = false;
        if (!this.stopped) {
          logger.warn({ err: error }, 'WEBHOOK_CHANGES follower stopped; following it again');
          this.scheduleFollow();
        }
      });
    } catch (error) {
      logger.warn({ err: error }, 'cannot follow WEBHOOK_CHANGES yet; webhooks are read from the webhook service meanwhile');
      this.scheduleFollow();
    }
  }

  private apply(sequence: number, data: Uint8Array): void {
    const { listener } = this.options;
    if (sequence <= this.applied) return;
    if (sequence !== this.applied + 1) {
      // Notices left the stream before this replica read them (WEBHOOK_CHANGES_MAX_AGE_SECONDS).
      listener.forgetAll('gap');
    } else {
      const change = readWebhookChange(data);
      if (change) listener.changed(change);
      else listener.forgetAll('unreadable');
    }
    this.applied = sequence;
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.sequence <= sequence) {
        clearTimeout(waiter.timer);
        waiter.resolve(true);
      } else {
        still.push(waiter);
      }
    }
    this.waiters = still;
  }

  private restart(): void {
    if (this.stopped || this.starting || this.restartTimer) return;
    this.following = false;
    const messages = this.messages;
    this.messages = undefined;
    messages?.stop();
    this.options.listener.forgetAll('restart');
    void this.start();
  }

  private scheduleFollow(): void {
    if (this.stopped || this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped && !this.following) void this.start();
    }, this.options.restartDelayMs ?? 1_000);
    this.restartTimer.unref();
  }
}
