import { setTimeout as sleep } from 'node:timers/promises';
import { untilShortBatch } from '@worklane/db';
import { SpanKind, inSpan, restoreTraceContext } from '@worklane/messaging';
import { BackgroundWorker, type Logger, type PassResult, type Registry } from '@worklane/observability';
import {
  AddressPolicyError,
  deliveryHeaders,
  resolvePublicAddresses,
  sendWebhookRequest,
  type AllowedCidrs,
  type CheckedAddress,
  type HostLookup,
  type PinnedDispatchers,
  type WebhookResponse,
} from '@worklane/webhooks';
import { DirectoryUnavailableError, type WebhookDirectory, type WebhookTarget } from '../clients/webhooks';
import type { AttemptOutcome, ClaimedDelivery, DeliveryStore } from '../data/deliveries';
import { GroupCommit } from '../data/group-commit';
import type { FailureReason } from '../domain/delivery';
import { decide } from '../domain/outcome';
import type { HealthObserver } from '../health/health-recorder';
import { attemptResult, type DeliveryMetrics } from '../metrics';
import { SendingBudgets } from './budgets';
import { CircuitBreakers, DEFAULT_DEFER_BATCH_SIZE, isEndpointFailure, type CircuitBreakerOptions, type EndpointHealth } from './circuit-breaker';
import type { ConnectionPacing } from './connection-pacing';
import { recordedHeaders, type ExchangeLimits } from './exchange';
import { DEFAULT_LAUNCHES_PER_TURN, LaunchTurns } from './launch-turns';
import type { EndpointRateLimits } from './rate-limits';

export interface SenderOptions {
  store: DeliveryStore;
  webhooks: WebhookDirectory;
  dispatchers: PinnedDispatchers;
  logger: Logger;
  metrics: DeliveryMetrics;
  allowedCidrs: AllowedCidrs;
  /** The resolver the address policy asks; the system resolver when undefined. */
  lookup?: HostLookup | undefined;
  userAgent: string;
  schedule: readonly number[];
  /** The whole attempt, from connecting to the end of the response excerpt. */
  timeoutMs: number;
  /** From the request sent to the response headers. */
  headersTimeoutMs: number;
  /** Resolving the receiver's host. */
  dnsTimeoutMs: number;
  concurrency: number;
  perTeamConcurrency: number;
  perWebhookConcurrency: number;
  breaker: CircuitBreakerOptions;
  pollIntervalMs: number;
  leaseMs: number;
  /** Where the sender's passes and failures are counted. */
  registry?: Registry;
  /** What each attempt keeps of its exchange; 4 KiB of body and of headers when not given. */
  exchange?: ExchangeLimits;
  /** Told of every recorded attempt and breaker transition (endpoint health, auto-disable). */
  health?: HealthObserver;
  /** Keeps the claim's per-endpoint rate limits in step with each webhook looked up before its attempts. */
  rateLimits?: EndpointRateLimits;
  /**
   * Attempts started in one turn of the event loop at most (LaunchTurns; DELIVERY_LAUNCHES_PER_TURN,
   * DEFAULT_LAUNCHES_PER_TURN when not given): starting one is synchronous work (signature,
   * request, connection), so a claim of CLAIM_BATCH deliveries is started over several turns,
   * teams in turn, and whatever else the replica has to do goes in between.
   */
  launchesPerTurn?: number;
  /**
   * Deliveries of circuit-broken endpoints moved to their probe time by one statement at most
   * (DELIVERY_DEFER_BATCH_SIZE; DEFAULT_DEFER_BATCH_SIZE when not given).
   */
  deferBatchSize?: number;
  /**
   * Paces the new receiver connections of each team (DELIVERY_TEAM_CONNECTIONS_PER_SECOND and
   * _BURST); attempts open connections unpaced when not given.
   */
  connectionPacing?: ConnectionPacing;
}

/** Deliveries claimed per query; more are claimed as soon as attempts finish. */
const CLAIM_BATCH = 100;
/** How long a delivery waits when the webhook service cannot say whether its webhook still exists. */
const DIRECTORY_RETRY_MS = 5_000;
/** Finished attempts free slots; waiting this long lets several be refilled by one claim. */
const REFILL_DELAY_MS = 5;
/** Bytes of response body, and of each header list, an attempt keeps when no limits are given. */
const DEFAULT_EXCHANGE_BYTES = 4096;
/**
 * Attempts recorded by one statement at most. Attempts that finish while a statement is in flight
 * are recorded together by the next one (no linger: an idle replica records each at once).
 */
const RECORD_BATCH = 200;
/**
 * Recording statements in flight at once. One: recording is off the receiver's path (the slot is
 * free before it), so it may wait for the statement ahead and write more attempts per statement.
 */
const RECORD_WRITES = 1;
/**
 * How long a recording waits for company. The receiver has its request by then, so this costs no
 * delivery any time (only a later event of the same issue, which waits for the record, waits this
 * much more), and on a quiet replica it turns one statement per attempt into one per several.
 */
const RECORD_LINGER_MS = 10;

/** Why an attempt found no receiver to talk to, in words safe to show the webhook's owner. */
function addressRefusal(error: AddressPolicyError): string {
  // The resolved address stays out: a client must not learn how internal names resolve.
  return error.reason === 'non_public' ? 'address not allowed: the host resolves to a non-public address' : 'DNS lookup failed: the host does not resolve';
}

/**
 * Sends due deliveries. Each claim leases rows with FOR UPDATE SKIP LOCKED, so replicas share the
 * work, and a replica that dies mid-attempt only delays its deliveries until the lease runs out.
 * Attempts run independently within budgets (in total, per team, per endpoint) and claims serve
 * teams in turn, so one team's slow or dead receivers hold up no other team. An endpoint that keeps
 * failing is circuit-broken: its deliveries wait in the log, holding no slot, until a probe shows
 * it answers again.
 */
export class DeliverySender {
  private running = false;
  private readonly worker: BackgroundWorker;
  private wakeRequested = false;
  private refillTimer: NodeJS.Timeout | undefined;
  /**
   * Set when the last claim took all it could or found the replica's whole budget in use: more may
   * be due than it took, so any slot that frees up is refilled at once. Otherwise only a slot whose
   * team, endpoint or replica was at its budget is (SendingBudgets.atBudget): that team's or
   * endpoint's due deliveries were left out for want of it.
   */
  private backlog = false;
  /** A claim is running. */
  private claiming = false;
  /** Set when the last claim took as many deliveries as it could: more may be due, and they go first. */
  private lastClaimFull = false;
  private readonly budgets: SendingBudgets;
  private readonly breakers: CircuitBreakers;
  /** Endpoints whose breaker opened since the last deferral, with when their probe may go. */
  private readonly toDefer = new Map<number, number>();
  /** The deferral statement in flight, at most one. */
  private deferring: Promise<void> | undefined;
  private lastDeferral = 0;
  private rotateAfter = 0;
  /** When the next delivery a rate limit held back is due, as the last claim saw it. */
  private pacedDueAtMs: number | null = null;
  private readonly attempts = new Set<Promise<void>>();
  private readonly resolving = new Map<string, Promise<CheckedAddress[]>>();
  private readonly recorder: GroupCommit<{ delivery: ClaimedDelivery; outcome: AttemptOutcome }, boolean>;
  private readonly turns: LaunchTurns;

  constructor(private readonly options: SenderOptions) {
    this.recorder = new GroupCommit(
      async (attempts) => {
        const { recorded, nextOfIssueDue } = await options.store.recordAttemptsAndFollow(attempts);
        // A later event of an issue waited for one of these: claim it now rather than at the next poll.
        if (nextOfIssueDue > 0) this.wake();
        return recorded;
      },
      RECORD_BATCH,
      RECORD_WRITES,
      RECORD_LINGER_MS,
    );
    this.turns = new LaunchTurns(options.launchesPerTurn ?? DEFAULT_LAUNCHES_PER_TURN);
    this.budgets = new SendingBudgets({ total: options.concurrency, perTeam: options.perTeamConcurrency, perWebhook: options.perWebhookConcurrency });
    this.breakers = new CircuitBreakers(options.breaker);
    this.worker = new BackgroundWorker({ name: 'delivery sender', logger: options.logger, registry: options.registry, idleMs: options.pollIntervalMs, pass: () => this.pass() });
    options.metrics.observeQueue({
      inFlight: () => this.budgets.inFlight,
      teamsSending: () => this.budgets.teamsSending,
      teamsAtBudget: () => this.budgets.teamsAtBudget,
      breakers: () => this.breakers.counts(),
    });
  }

  /** The circuit breaker's view of an endpoint in this replica (for an endpoint health API). */
  endpointHealth(webhookId: number): EndpointHealth {
    return this.breakers.health(webhookId);
  }

  /** Every endpoint whose breaker is open or half-open in this replica. */
  unhealthyEndpoints(): EndpointHealth[] {
    return this.breakers.notClosed();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.worker.start();
  }

  /**
   * New deliveries are due: look now rather than at the next poll. Those of a team at its budget
   * in this replica (`teamId`) could not be claimed now: the slot its next finished attempt frees
   * starts that claim (freeSlot), so they wake nothing.
   */
  wake(teamId?: number): void {
    if (teamId !== undefined && this.budgets.teamAtBudget(teamId)) return;
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    this.wakeRequested = true;
    this.worker.wake();
  }

  get inFlight(): number {
    return this.attempts.size;
  }

  /** Attempts in flight for one team in this replica. */
  inFlightOfTeam(teamId: number): number {
    return this.budgets.inFlightOfTeam(teamId);
  }

  /** Stops claiming and lets the attempts in flight finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.refillTimer);
    await this.worker.stop();
    await Promise.allSettled([...this.attempts, this.deferring]);
  }

  /**
   * One claim: starts deferring the deliveries of endpoints whose breaker opened, claims what the
   * budgets allow and launches those attempts. Goes again at once when the claim was full and slots
   * are free; otherwise waits for a wake-up (new deliveries, freed slots) or the next due probe.
   *
   * The claim does not wait for the deferral: it leaves out open endpoints by itself (the budget
   * names them), and a deferral of one team's large backlog must not hold up every team's claim.
   */
  private async pass(): Promise<PassResult> {
    this.wakeRequested = false;
    let scannedFull = false;
    this.deferring ??= this.deferOpenEndpoints().finally(() => (this.deferring = undefined));
    const budget = this.budgets.claimBudget(CLAIM_BATCH, this.breakers);
    if (budget.limit > 0) {
      this.claiming = true;
      try {
        const { deliveries: claimed, pacedDueAtMs } = await this.options.store.claimDue(budget, this.options.leaseMs, this.rotateAfter);
        this.pacedDueAtMs = pacedDueAtMs;
        scannedFull = claimed.length === budget.limit;
        this.lastClaimFull = scannedFull;
        const teams = new Set(claimed.map((delivery) => delivery.teamId));
        // More teams due than one claim serves: the next claim starts after the last one served.
        this.rotateAfter = teams.size >= budget.limit ? Math.max(...teams) : 0;
        this.launch(claimed);
      } finally {
        this.claiming = false;
        // A team or endpoint the budgets held back is refilled when its own slot frees: a slot of
        // another team, with nothing due, would only make an empty claim (one per attempt of every
        // other team, while a team is at its budget).
        this.backlog = scannedFull || this.budgets.free <= 0;
      }
    } else {
      this.backlog = this.budgets.free <= 0;
    }
    if (!this.running) return 'idle';
    if (scannedFull && this.budgets.free > 0) return 'more';
    return this.sleepMs(this.options.pollIntervalMs);
  }

  /**
   * The poll interval, or less when an open breaker lets its probe go sooner or a delivery a rate
   * limit held back is due sooner (so a limited endpoint gets its pace, not one batch per poll).
   */
  private sleepMs(pollIntervalMs: number): number {
    const now = Date.now();
    let next = pollIntervalMs;
    // A time already past is claimed as soon as slots free up (each freed slot wakes the sender).
    if (this.pacedDueAtMs !== null && this.pacedDueAtMs > now) next = Math.min(next, this.pacedDueAtMs - now);
    for (const health of this.breakers.notClosed()) {
      if (health.retryAt !== null) next = Math.min(next, Math.max(1, health.retryAt - now));
    }
    return next;
  }

  /**
   * Moves the deliveries of endpoints whose breaker is open to when it lets its probe go: at once
   * for a breaker that just opened, and again every poll interval for the deliveries that arrived
   * meanwhile. One statement for every such endpoint, never one per delivery, of at most
   * DELIVERY_DEFER_BATCH_SIZE deliveries: an endpoint that failed for a while may have thousands
   * waiting, and when its breaker opens they are moved batch after batch, each followed by a rest
   * as long as the statement took, so the deferral keeps the database busy half the time at most
   * and every team's statements go in between.
   */
  private async deferOpenEndpoints(): Promise<void> {
    const now = Date.now();
    const due = now - this.lastDeferral >= this.options.pollIntervalMs;
    if (this.toDefer.size === 0 && !due) return;
    const endpoints = new Map(this.toDefer);
    this.toDefer.clear();
    if (due) {
      this.lastDeferral = now;
      for (const health of this.breakers.notClosed()) if (health.state === 'open' && health.retryAt !== null) endpoints.set(health.webhookId, health.retryAt);
    }
    if (endpoints.size === 0) return;
    let targets = [...endpoints].map(([webhookId, untilMs]) => ({ webhookId, untilMs }));
    const batchSize = this.options.deferBatchSize ?? DEFAULT_DEFER_BATCH_SIZE;
    const batch = async () => {
      const moved = await this.options.store.deferUntil(targets, batchSize);
      if (moved > 0) this.options.metrics.deferred.inc(moved);
      // A breaker that let its probe go meanwhile needs nothing more moved.
      targets = targets.filter((target) => this.breakers.state(target.webhookId) === 'open');
      return moved;
    };
    try {
      await untilShortBatch(batch, batchSize, { restRatio: 1, keepGoing: () => this.running && targets.length > 0 });
    } catch (error) {
      this.options.logger.warn({ err: error }, 'deferring the deliveries of circuit-broken endpoints failed');
    }
  }

  /** Time a delivery the fan-out stores claimed for this replica stays reserved to it (the claim's lease). */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /**
   * A sending slot for a delivery to `webhook` that may be attempted as soon as it is stored (the
   * fast path), or undefined when it must wait for a claim: the sender is stopping, the last claim
   * left due deliveries behind (they go first), the budgets in total, of the team or of the
   * endpoint are used up, the endpoint's breaker is not closed, or the endpoint has a rate limit
   * (only the claim spends its tokens). The slot counts against the next claims at once; the
   * caller gives it back with `release` when the delivery does not go now after all.
   */
  reserveAtOnce(webhook: WebhookTarget): { release(): void } | undefined {
    if (!this.running || this.lastClaimFull || webhook.rateLimitPerSecond !== null) return undefined;
    const giveBack = this.budgets.takeIfRoom(webhook.teamId, webhook.id, this.breakers);
    if (!giveBack) return undefined;
    return { release: () => this.freeSlot(webhook.teamId, webhook.id, giveBack) };
  }

  /**
   * Attempts a delivery the fan-out stored leased to this replica, in the slot `reserveAtOnce`
   * gave for it, to the webhook as the fan-out found it a moment ago.
   */
  sendAtOnce(delivery: ClaimedDelivery, webhook: WebhookTarget, slot: { release(): void }): void {
    if (!this.running) {
      // Stopping: give the delivery back to the claims of any replica rather than wait for its lease.
      slot.release();
      this.options.store
        .release(delivery, 0)
        .catch((error) => this.options.logger.warn({ err: error, deliveryId: delivery.id }, 'releasing a delivery failed; its lease will run out'));
      return;
    }
    this.options.metrics.attemptsStarted.inc({ path: 'at_once' });
    this.options.metrics.scheduleDelay.observe(0);
    this.options.metrics.teamInFlight.observe(this.budgets.inFlightOfTeam(delivery.teamId));
    this.launchOne(delivery, Promise.resolve(webhook), () => slot.release());
  }

  /**
   * Gives a slot back; when work may be waiting for it, claims again shortly, for every slot freed
   * meanwhile. A slot freed while a claim runs always does: that claim's budget still counted it.
   */
  private freeSlot(teamId: number, webhookId: number, giveBack: () => void): void {
    const heldBack = this.budgets.atBudget(teamId, webhookId);
    giveBack();
    if (!(this.backlog || heldBack || this.claiming) || this.refillTimer || this.wakeRequested) return;
    this.refillTimer = setTimeout(() => this.wake(), REFILL_DELAY_MS);
  }

  /**
   * Starts the attempts of a claim. The webhook is looked up once per webhook of the claim, right
   * before its attempts are made: a webhook deleted or deactivated before that gets nothing.
   */
  private launch(claimed: ClaimedDelivery[]): void {
    const lookups = new Map<number, Promise<WebhookTarget | null>>();
    const now = Date.now();
    if (claimed.length > 0) this.options.metrics.attemptsStarted.inc({ path: 'claim' }, claimed.length);
    for (const delivery of claimed) {
      let webhook = lookups.get(delivery.webhookId);
      if (!webhook) {
        webhook = this.lookUpWebhook(delivery.teamId, delivery.webhookId);
        // Rejections are handled by each attempt; this keeps an unobserved copy from warning.
        webhook.then((target) => target && this.options.rateLimits?.observeQuietly([target])).catch(() => {});
        lookups.set(delivery.webhookId, webhook);
      }
      this.options.metrics.scheduleDelay.observe(Math.max(0, now - delivery.dueAtMs) / 1000);
      this.options.metrics.teamInFlight.observe(this.budgets.inFlightOfTeam(delivery.teamId) + 1);
      const giveBack = this.budgets.take(delivery.teamId, delivery.webhookId);
      this.launchOne(delivery, webhook, () => this.freeSlot(delivery.teamId, delivery.webhookId, giveBack));
    }
  }

  /**
   * Runs one attempt in a slot already taken, in its team's turn (LaunchTurns); `giveBack` frees
   * the slot (called once).
   */
  private launchOne(delivery: ClaimedDelivery, webhook: Promise<WebhookTarget | null>, giveBack: () => void): void {
    // The receiver's slot frees as soon as the exchange ends; recording it needs no receiver.
    let released = false;
    const releaseSlot = () => {
      if (released) return;
      released = true;
      giveBack();
    };
    // Started in its turn: a burst of one team's attempts is spread over turns of the event loop.
    const attempt = this.turns
      .next(delivery.teamId)
      .then(() => this.attempt(delivery, webhook, releaseSlot))
      .catch((error) => this.options.logger.error({ err: error, deliveryId: delivery.id }, 'delivery attempt failed unexpectedly'))
      .finally(() => {
        this.attempts.delete(attempt);
        releaseSlot();
      });
    this.attempts.add(attempt);
  }

  /** The webhook, null when it no longer exists, or a DirectoryUnavailableError. */
  private async lookUpWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | null> {
    return (await this.options.webhooks.getWebhook(teamId, webhookId)) ?? null;
  }

  private attempt(delivery: ClaimedDelivery, lookup: Promise<WebhookTarget | null>, releaseSlot: () => void): Promise<void> {
    return inSpan(
      `webhook ${delivery.event} attempt`,
      {
        kind: SpanKind.INTERNAL,
        parent: restoreTraceContext(delivery.traceContext),
        attributes: { 'worklane.delivery.id': delivery.id, 'worklane.webhook.id': delivery.webhookId, 'worklane.delivery.attempt': delivery.attemptCount + 1 },
      },
      async () => {
        const { store, logger } = this.options;
        let webhook: WebhookTarget | null;
        try {
          webhook = await lookup;
        } catch (error) {
          if (!(error instanceof DirectoryUnavailableError)) throw error;
          logger.warn({ err: error.cause, deliveryId: delivery.id }, 'webhook service unavailable; delivery postponed');
          await store.release(delivery, DIRECTORY_RETRY_MS);
          return;
        }
        if (!webhook || !webhook.active) {
          await this.abandon(delivery, webhook ? 'webhook_inactive' : 'webhook_deleted');
          return;
        }
        if (this.options.rateLimits && !(await this.options.rateLimits.admits(delivery.ratePerSecond ?? null, webhook))) {
          // Claimed before the webhook's new rate limit was stored: the next claim paces it.
          await store.release(delivery, 0);
          this.wake();
          return;
        }
        await this.send(delivery, webhook, releaseSlot);
      },
    );
  }

  private async abandon(delivery: ClaimedDelivery, reason: FailureReason): Promise<void> {
    await this.options.store.abandon(delivery, reason);
    this.options.metrics.deliveries.inc({ outcome: reason });
  }

  private async send(delivery: ClaimedDelivery, webhook: WebhookTarget, releaseSlot: () => void): Promise<void> {
    const { metrics, logger, schedule } = this.options;
    const startedAtMs = Date.now();
    const url = new URL(webhook.url);
    const response = await this.post(url, delivery, webhook, startedAtMs);
    const transition = this.breakers.record(delivery.webhookId, isEndpointFailure(response));
    if (transition) {
      metrics.breakerTransitions.inc({ to: transition === 'opened' ? 'open' : 'closed' });
      const health = this.breakers.health(delivery.webhookId);
      this.options.health?.breaker({
        teamId: delivery.teamId,
        webhookId: delivery.webhookId,
        state: transition === 'opened' ? 'open' : 'closed',
        atMs: Date.now(),
        retryAtMs: health.retryAt,
      });
      // Its deliveries are deferred (opened) or may go again (closed) by the next claim: claim now,
      // as the slot this attempt frees would not otherwise start one.
      this.wake();
      if (transition === 'opened' && health.retryAt !== null) {
        this.toDefer.set(delivery.webhookId, health.retryAt);
        logger.info({ webhookId: delivery.webhookId, teamId: delivery.teamId, retryAt: new Date(health.retryAt).toISOString() }, 'endpoint keeps failing; circuit opened');
      } else if (transition === 'closed') {
        logger.info({ webhookId: delivery.webhookId, teamId: delivery.teamId }, 'endpoint answers again; circuit closed');
      }
    }
    releaseSlot();
    const attemptsMade = delivery.attemptCount + 1;
    const decision = decide(response, attemptsMade, schedule);
    metrics.attemptDuration.observe({ result: attemptResult(response.statusCode) }, response.durationMs / 1000);
    const recorded = await this.recorder.submit({
      delivery,
      outcome: {
        startedAtMs,
        url: webhook.url,
        statusCode: response.statusCode,
        error: response.error,
        durationMs: response.durationMs,
        responseBody: response.responseExcerpt,
        requestHeaders: recordedHeaders(response.requestHeaders, this.options.exchange?.headersMaxBytes ?? DEFAULT_EXCHANGE_BYTES),
        responseHeaders: recordedHeaders(response.responseHeaders, this.options.exchange?.headersMaxBytes ?? DEFAULT_EXCHANGE_BYTES),
        ...decision,
      },
    });
    if (!recorded) {
      logger.warn({ deliveryId: delivery.id }, 'delivery lease expired during the attempt; another sender owns it now');
      return;
    }
    this.options.health?.attempt({
      teamId: delivery.teamId,
      webhookId: delivery.webhookId,
      startedAtMs,
      durationMs: response.durationMs,
      statusCode: response.statusCode,
      error: response.error,
    });
    if (decision.status === 'pending') {
      metrics.retriesScheduled.inc();
    } else {
      metrics.deliveries.inc({ outcome: decision.status === 'succeeded' ? 'succeeded' : (decision.failureReason ?? 'exhausted') });
      if (decision.status === 'succeeded' && !delivery.isRedelivery) metrics.lag.observe(Math.max(0, Date.now() - delivery.eventCreatedAtMs) / 1000);
    }
    logger.debug({ deliveryId: delivery.id, attempt: attemptsMade, statusCode: response.statusCode, error: response.error, status: decision.status }, 'delivery attempt');
  }

  /**
   * Resolves and checks the receiver's address now. Attempts to the same host at the same moment
   * share one resolution, which is as fresh as each of them needs.
   */
  private resolve(hostname: string): Promise<CheckedAddress[]> {
    let pending = this.resolving.get(hostname);
    if (!pending) {
      const { allowedCidrs, lookup, dnsTimeoutMs } = this.options;
      pending = resolvePublicAddresses(hostname, allowedCidrs, { lookup, timeoutMs: dnsTimeoutMs }).finally(() => this.resolving.delete(hostname));
      this.resolving.set(hostname, pending);
    }
    return pending;
  }

  /**
   * Waits for the team's pace when the attempt would open a new connection (ConnectionPacing):
   * in its slot, before the request is signed, so its signature's timestamp is the send's.
   */
  private async paceNewConnection(delivery: ClaimedDelivery, origin: string, address: string): Promise<void> {
    const { connectionPacing, dispatchers, metrics } = this.options;
    if (!connectionPacing || !dispatchers.opensConnection(origin, address)) return;
    const waitMs = connectionPacing.delayMs(delivery.teamId);
    if (waitMs <= 0) return;
    metrics.connectionWaits.inc();
    metrics.connectionWaitSeconds.inc(waitMs / 1000);
    await sleep(waitMs);
  }

  /** POSTs over a connection pinned to the address that was just checked. */
  private async post(url: URL, delivery: ClaimedDelivery, webhook: WebhookTarget, startedAtMs: number): Promise<WebhookResponse> {
    const { dispatchers, timeoutMs, headersTimeoutMs, userAgent } = this.options;
    let address: string;
    try {
      const checked = await this.resolve(url.hostname);
      // IPv4 first: an IPv6 route is the more likely one to be missing.
      address = (checked.find((candidate) => candidate.family === 4) ?? checked[0])!.address;
    } catch (error) {
      if (!(error instanceof AddressPolicyError)) throw error;
      return { statusCode: null, error: addressRefusal(error), durationMs: Date.now() - startedAtMs, responseExcerpt: null };
    }
    await this.paceNewConnection(delivery, url.origin, address);
    const headers = deliveryHeaders({
      deliveryId: delivery.id,
      body: delivery.body,
      secret: webhook.secret,
      previousSecrets: webhook.previousSecrets,
      ed25519PrivateKey: webhook.ed25519PrivateKey,
      timestamp: Math.floor(Date.now() / 1000),
      event: delivery.event,
      userAgent,
    });
    const excerptBytes = this.options.exchange?.responseExcerptBytes ?? DEFAULT_EXCHANGE_BYTES;
    const response = await sendWebhookRequest({
      url,
      headers,
      body: delivery.body,
      dispatcher: dispatchers.forAddress(url.origin, address),
      timeoutMs,
      headersTimeoutMs,
      excerptBytes,
    });
    return { ...response, requestHeaders: headers };
  }
}
