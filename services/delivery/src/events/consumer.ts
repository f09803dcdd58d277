import {
  DELIVERY_CONSUMER,
  ISSUE_EVENTS_STREAM,
  SpanKind,
  captureTraceContext,
  extractTraceContext,
  inSpan,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from '@worklane/messaging';
import { BackgroundWorker, type Logger, type PassResult, type Registry } from '@worklane/observability';
import type { WebhookDirectory, WebhookTarget } from '../clients/webhooks';
import type { ClaimedDelivery, DeliveryStore, EventFanOut } from '../data/deliveries';
import { FairGroupCommit } from '../data/fair-group-commit';
import type { FanOutBacklog } from '../data/fan-out-backlog';
import type { EventHeader } from '../domain/delivery';
import { DurableAcks } from './durable-acks';
import type { FanOutBudget } from './fan-out-budget';
import { readIncomingEvent } from './incoming-event';
import { inScope } from './webhook-scope';

/** A sending slot held for one delivery. */
export interface HeldSlot {
  release(): void;
}

/** The sender, as the fast path from fan-out to sending sees it (sending/sender.ts). */
export interface SendsAtOnce {
  /** How long a delivery stored claimed by this replica stays reserved to it. */
  readonly leaseMs: number;
  /** A slot for a delivery to `webhook` that may go as soon as it is stored; undefined when it must wait for a claim. */
  reserveAtOnce(webhook: WebhookTarget): HeldSlot | undefined;
  /** Attempts a delivery stored claimed by this replica, in its slot. */
  sendAtOnce(delivery: ClaimedDelivery, webhook: WebhookTarget, slot: HeldSlot): void;
}

export interface EventConsumerOptions {
  js: JetStreamClient;
  store: DeliveryStore;
  webhooks: WebhookDirectory;
  logger: Logger;
  /** Events being fanned out at once. */
  concurrency: number;
  /** Delay of the first attempt (the retry schedule's first entry). */
  firstDelayMs: number;
  /** Declares the stream and consumer again, for a NATS server that lost them. */
  declare: () => Promise<void>;
  /** How many deliveries each team's events may create now; events beyond it wait in `backlog`. */
  budget: FanOutBudget;
  backlog: FanOutBacklog;
  /**
   * Called when new deliveries are stored for a claim, to send them without waiting for a poll,
   * with the team they are of (each fan-out statement carries one team's events).
   */
  onDeliveriesCreated: (teamId: number) => void;
  /**
   * The fast path: deliveries that may go at once are stored claimed by this replica and handed
   * to the sender in memory, with no claim. Without it every delivery waits for a claim.
   */
  sendAtOnce?: SendsAtOnce;
  /** Called when events were put in the backlog, to drain it as budgets refill. */
  onQueued: (events: number) => void;
  /** Records a dead-lettered event in the delivery log of the webhooks it was meant for. */
  recordDeadLettered: (event: EventHeader, notice: Buffer, webhookIds: number[]) => Promise<number>;
  /** Where the consumer's passes and failures are counted. */
  registry?: Registry;
  /**
   * Sees the webhooks the events' teams have, as the webhook service described them, before their
   * deliveries are stored (the per-endpoint rate limits are kept up to date from them).
   */
  onTargets?: (targets: WebhookTarget[]) => Promise<void>;
  /** Fan-out statements in flight at once (DELIVERY_FANOUT_STATEMENTS; 3 unless given, at least 2). */
  fanOutStatements?: number;
  /**
   * Longest an event whose deliveries went to the sender at once waits for the WAL flush that lets
   * it be acknowledged (EVENT_ACK_FLUSH_WITHIN_MS; 20 ms unless given). See DurableAcks.
   */
  ackFlushWithinMs?: number;
  /** The commit that waits for the WAL flush (DeliveryStore.flushCommits unless given). */
  flushCommits?: () => Promise<void>;
}

/** What a fan-out stored for one event. */
interface StoredFanOut {
  /**
   * Stored by a commit that did not wait for the WAL flush (deliveries handed to the sender at
   * once): the event is acknowledged only after a flush (DurableAcks).
   */
  unflushed: boolean;
}

const DURABLE: StoredFanOut = { unflushed: false };

/**
 * Events fanned out by one statement at most. Events arriving while a statement is in flight are
 * written together by the next one (no linger: an idle replica writes each event at once).
 */
const FAN_OUT_BATCH = 200;
/**
 * DELIVERY_FANOUT_STATEMENTS's default: fan-out statements in flight at once. Each carries the
 * events of one team, and one team holds all of them but one at most (FairGroupCommit): one team's
 * burst leaves a statement free for the others' events.
 */
const DEFAULT_FAN_OUT_STATEMENTS = 3;

/** EVENT_ACK_FLUSH_WITHIN_MS's default. */
const DEFAULT_ACK_FLUSH_WITHIN_MS = 20;

/** How long a failed event waits before JetStream offers it again. */
const RETRY_EVENT_MS = 2_000;

/** The pause before asking for a new subscription when the last one ended (the connection closed). */
const RESUBSCRIBE_MS = 500;

/** A counting semaphore: `acquire` resolves once one of `size` slots is free. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}
  acquire(): Promise<void> {
    if (this.used < this.size) {
      this.used += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.used -= 1;
  }
}

/**
 * Consumes ISSUE_EVENTS with the shared durable pull consumer and turns each event into one
 * delivery per subscribed webhook, whose body is the event's webhook body (incoming-event.ts). A message is acked only once its deliveries are committed, and
 * delivery ids are derived from (event, webhook), so a message seen twice changes nothing.
 */
export class EventConsumer {
  private running = false;
  private readonly worker: BackgroundWorker;
  private messages: ConsumerMessages | undefined;
  private readonly slots: Slots;
  private readonly handling = new Set<Promise<void>>();
  private readonly fanOuts: FairGroupCommit<number, Omit<EventFanOut, 'webhookIds'>, StoredFanOut>;
  /** Events whose deliveries were stored without waiting for the WAL flush, until it is done. */
  private readonly acks: DurableAcks;
  /**
   * The store of the last event of each issue this replica received and has not stored yet: the
   * next event of the issue is stored only after it. Two events of one issue stored by concurrent
   * statements could otherwise commit in the reverse order, and a claim that ran between the two
   * commits would find the later event's delivery with no earlier one pending and send it first;
   * nor could the later one take the fast path past an earlier one not stored yet.
   */
  private readonly issueStores = new Map<number, Promise<void>>();

  constructor(private readonly options: EventConsumerOptions) {
    this.slots = new Slots(options.concurrency);
    this.fanOuts = new FairGroupCommit((teamId, events) => this.fanOut(teamId, events), FAN_OUT_BATCH, Math.max(2, options.fanOutStatements ?? DEFAULT_FAN_OUT_STATEMENTS));
    this.acks = new DurableAcks({
      flush: options.flushCommits ?? (() => options.store.flushCommits()),
      withinMs: options.ackFlushWithinMs ?? DEFAULT_ACK_FLUSH_WITHIN_MS,
      onFailure: (error, events) => options.logger.warn({ err: error, events }, 'flushing the fan-out’s commits failed; its events will be fanned out again'),
    });
    this.worker = new BackgroundWorker({
      name: 'event consumer',
      logger: options.logger,
      registry: options.registry,
      idleMs: RESUBSCRIBE_MS,
      minBackoffMs: 500,
      pass: () => this.subscription(),
      // A NATS server that lost its store has neither stream nor consumer: declare them again.
      onFailure: () => options.declare().catch((error) => options.logger.warn({ err: error }, 'declaring ISSUE_EVENTS and its consumer failed')),
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.worker.start();
  }

  /**
   * Stops pulling, finishes the events being fanned out and acknowledges them once flushed;
   * unacked ones go to another replica.
   */
  async stop(): Promise<void> {
    this.running = false;
    await this.messages?.close().catch(() => {});
    await this.worker.stop();
    await Promise.allSettled([...this.handling]);
    await this.acks.settle();
  }

  /**
   * One subscription: pulls messages and hands each to a fan-out slot until the subscription ends
   * (the connection closed, or a stop), then a short pause before the next one.
   */
  private async subscription(): Promise<PassResult> {
    const { js, concurrency } = this.options;
    const consumer = await js.consumers.get(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER);
    const messages = await consumer.consume({ max_messages: concurrency * 2 });
    this.messages = messages;
    void this.watch(messages);
    for await (const message of messages) {
      await this.slots.acquire();
      if (!this.running) {
        // Offer it to another replica now rather than after the ack wait.
        message.nak();
        this.slots.release();
        continue;
      }
      const handled = this.handle(message).finally(() => {
        this.handling.delete(handled);
        this.slots.release();
      });
      this.handling.add(handled);
    }
    return RESUBSCRIBE_MS;
  }

  /** Re-declares the stream and consumer when the server reports them missing (a NATS that lost its store). */
  private async watch(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (status.type === 'consumer_not_found' || status.type === 'stream_not_found') {
        this.options.logger.warn({ status: status.type }, 'ISSUE_EVENTS consumer missing; declaring it again');
        await this.options.declare().catch(() => {});
      }
    }
  }

  /**
   * Stores the deliveries of a batch of one team's events received together. The webhook service is asked
   * once per team and event name, after every event of the batch arrived, so a webhook created
   * before an event was committed is always among the answers. An event whose team is over its
   * fan-out budget (or already has events waiting) is stored whole in the backlog instead, with its
   * webhooks, and acked like the others: one row, whatever its fan-out, so a team that fans out
   * more than its share cannot keep the database from the other teams' deliveries.
   */
  private async fanOut(teamId: number, events: Omit<EventFanOut, 'webhookIds'>[]): Promise<StoredFanOut[]> {
    const { budget, backlog, onQueued } = this.options;
    const planned = await this.withTargets(events);
    const admitted = planned.map((fanOut) => budget.admit(fanOut.event.team_id, fanOut.webhookIds.length));
    const now = planned.filter((_, index) => admitted[index]);
    const later = planned.filter((_, index) => !admitted[index]);
    const [stored] = await Promise.all([this.store(teamId, now), backlog.queue(later)]);
    if (later.length > 0) onQueued(later.length);
    return admitted.map((goesNow) => (goesNow ? stored : DURABLE));
  }

  /**
   * Stores the deliveries of events within their team's fan-out budget (the earlier events of their
   * issues in this replica already stored: afterEarlierOfItsIssue). Those the sender has a slot for
   * and which are due at once, may be stored claimed (see DeliveryStore.createForEventsSendingNow) and are then
   * attempted straight away, before the statement's commit is flushed (what it stored for every
   * event of the statement is then acknowledged after a flush: DurableAcks); the rest wait for a
   * claim, which is woken for them.
   */
  private async store(teamId: number, events: (Omit<EventFanOut, 'webhookIds'> & { webhookIds: number[]; targets: WebhookTarget[] })[]): Promise<StoredFanOut> {
    const { store, sendAtOnce } = this.options;
    if (events.length === 0) return DURABLE;
    const onDeliveriesCreated = () => this.options.onDeliveriesCreated(teamId);
    const slots = new Map<string, HeldSlot[]>();
    const atOnce = events.map((fanOut) => {
      if (!sendAtOnce || fanOut.firstDelayMs > 0) return fanOut.targets.map(() => false);
      return fanOut.targets.map((webhook) => {
        const slot = sendAtOnce.reserveAtOnce(webhook);
        if (!slot) return false;
        const key = `${fanOut.event.id}/${webhook.id}`;
        slots.set(key, [...(slots.get(key) ?? []), slot]);
        return true;
      });
    });
    if (!sendAtOnce || slots.size === 0) {
      const created = await store.createForEvents(events);
      if (created.some((count) => count > 0)) onDeliveriesCreated();
      return DURABLE;
    }
    let stored: { created: number[]; leased: ClaimedDelivery[] };
    try {
      stored = await store.createForEventsSendingNow(events, atOnce, sendAtOnce.leaseMs);
    } catch (error) {
      for (const held of slots.values()) for (const slot of held) slot.release();
      throw error;
    }
    const targets = new Map(events.flatMap((fanOut) => fanOut.targets.map((webhook) => [webhook.id, webhook] as const)));
    for (const delivery of stored.leased) {
      const slot = slots.get(`${delivery.eventId}/${delivery.webhookId}`)?.pop();
      const webhook = targets.get(delivery.webhookId);
      // Cannot happen (a leased delivery had a slot and a target); its lease would give it back to a claim.
      if (!slot || !webhook) continue;
      sendAtOnce.sendAtOnce(delivery, webhook, slot);
    }
    for (const held of slots.values()) for (const slot of held) slot.release();
    const forClaim = stored.created.reduce((sum, count) => sum + count, 0) - stored.leased.length;
    if (forClaim > 0) onDeliveriesCreated();
    return { unflushed: true };
  }

  /**
   * The active webhooks of each event's team subscribed to it, and whose scope (organizations,
   * projects) holds it: an event outside a webhook's scope gets no delivery at all, so nothing of it
   * reaches that webhook's log. One question per team and event name.
   */
  private async withTargets<T extends { event: EventHeader }>(events: T[]): Promise<(T & { webhookIds: number[]; targets: WebhookTarget[] })[]> {
    const questions = new Map<string, Promise<WebhookTarget[]>>();
    for (const { event } of events) {
      const key = `${event.team_id}/${event.event}`;
      if (!questions.has(key)) questions.set(key, this.options.webhooks.listSubscriptions(event.team_id, event.event));
    }
    const answers = await Promise.all([...questions.values()]);
    await this.options.onTargets?.(answers.flat());
    const byKey = new Map([...questions.keys()].map((key, index) => [key, answers[index] as WebhookTarget[]]));
    return events.map((fanOut) => {
      const { team_id: teamId, event } = fanOut.event;
      const targets = (byKey.get(`${teamId}/${event}`) ?? []).filter(
        (webhook) => webhook.active && webhook.teamId === teamId && webhook.events.includes(event) && inScope(webhook, fanOut.event),
      );
      return { ...fanOut, webhookIds: targets.map((webhook) => webhook.id), targets };
    });
  }

  /** A dead-letter notice: nothing to send, an entry in the delivery log of each webhook it was meant for. */
  private async recordDeadLetter(message: JsMsg, header: EventHeader, notice: Buffer): Promise<void> {
    try {
      const [target] = await this.withTargets([{ event: header }]);
      const recorded = await this.options.recordDeadLettered(header, notice, target?.webhookIds ?? []);
      message.ack();
      this.options.logger.warn({ eventId: header.id, teamId: header.team_id, recorded }, 'recorded a dead-lettered event in the delivery log');
    } catch (error) {
      this.options.logger.warn({ err: error, eventId: header.id }, 'recording a dead-lettered event failed; it will be retried');
      message.nak(RETRY_EVENT_MS);
    }
  }

  private async handle(message: JsMsg): Promise<void> {
    const { logger, firstDelayMs } = this.options;
    const incoming = readIncomingEvent(message.subject, message.data);
    if (incoming.kind === 'invalid') {
      logger.error({ subject: message.subject, sequence: message.seq, problem: incoming.problem }, 'dropping a message that is not a valid issue event');
      message.term();
      return;
    }
    const { header, body } = incoming;
    if (incoming.kind === 'notice') return this.recordDeadLetter(message, header, body);
    // Queued here, in the order messages arrive, behind the earlier events of the issue.
    await this.afterEarlierOfItsIssue(header.issue_id, () => this.fanOutOne(message, header, body, firstDelayMs));
  }

  /**
   * Runs `store` once the earlier events of the issue this replica received are stored (or failed:
   * a failed event comes back later, and the claim's order wait covers it). Events of other issues
   * never wait; an issue's events are rarely more than one at a time.
   */
  private async afterEarlierOfItsIssue(issueId: number | undefined, store: () => Promise<void>): Promise<void> {
    if (issueId === undefined) return store();
    const earlier = this.issueStores.get(issueId);
    const mine = (earlier ?? Promise.resolve()).then(store);
    const settled = mine.then(
      () => {},
      () => {},
    );
    this.issueStores.set(issueId, settled);
    try {
      await mine;
    } finally {
      if (this.issueStores.get(issueId) === settled) this.issueStores.delete(issueId);
    }
  }

  private async fanOutOne(message: JsMsg, header: EventHeader, body: Buffer, firstDelayMs: number): Promise<void> {
    const { logger } = this.options;
    await inSpan(
      `${message.subject} process`,
      {
        kind: SpanKind.CONSUMER,
        parent: extractTraceContext(message.headers),
        attributes: { 'messaging.system': 'nats', 'messaging.destination.name': message.subject, 'messaging.message.id': header.id },
      },
      async () => {
        try {
          const stored = await this.fanOuts.submit(header.team_id, { event: header, body, traceContext: captureTraceContext(), firstDelayMs, streamSequence: message.seq });
          if (stored.unflushed)
            this.acks.afterFlush(
              () => message.ack(),
              () => message.nak(RETRY_EVENT_MS),
            );
          else message.ack();
        } catch (error) {
          logger.warn({ err: error, eventId: header.id }, 'fanning out an event failed; it will be retried');
          message.nak(RETRY_EVENT_MS);
        }
      },
    );
  }
}
