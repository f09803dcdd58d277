import { promClient, type Registry } from '@worklane/observability';

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
const LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1_800, 7_200, 36_000, 86_400];

/** Outcome label of a finished delivery. */
export type DeliveryOutcome = 'succeeded' | 'gone' | 'exhausted' | 'webhook_deleted' | 'webhook_inactive';

/** What the sending queue's gauges read when scraped. */
export interface QueueSource {
  inFlight(): number;
  teamsSending(): number;
  teamsAtBudget(): number;
  breakers(): Record<'closed' | 'open' | 'half_open', number>;
}

export interface DeliveryMetrics {
  deliveries: promClient.Counter<'outcome'>;
  attemptDuration: promClient.Histogram<'result'>;
  lag: promClient.Histogram;
  retriesScheduled: promClient.Counter;
  /** How late attempts start after they were due (the queue's wait). */
  scheduleDelay: promClient.Histogram;
  /** A team's attempts in flight, observed as each attempt starts (no per-team label). */
  teamInFlight: promClient.Histogram;
  deferred: promClient.Counter;
  breakerTransitions: promClient.Counter<'to'>;
  /** Events put in the fan-out backlog because their team was over its fan-out budget. */
  fanOutQueued: promClient.Counter;
  /** Attempts started, by how their delivery reached the sender: `at_once` (the fan-out's fast path) or `claim`. */
  attemptsStarted: promClient.Counter<'path'>;
  /** Attempts that waited for their team's pace of new connections (ConnectionPacing), and how long in all. */
  connectionWaits: promClient.Counter;
  connectionWaitSeconds: promClient.Counter;
  /** Binds the gauges to the sender. */
  observeQueue(source: QueueSource): void;
  /** Binds the fan-out backlog gauge to what counts the events waiting (all replicas together). */
  observeBacklog(size: () => Promise<number>): void;
}

const DELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const IN_FLIGHT_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  let source: QueueSource | undefined;
  new promClient.Gauge({
    name: 'worklane_delivery_attempts_in_flight',
    help: 'Delivery attempts in flight in this replica, all teams together',
    registers: [registry],
    collect() {
      if (source) this.set(source.inFlight());
    },
  });
  new promClient.Gauge({
    name: 'worklane_delivery_teams_sending',
    help: 'Teams with delivery attempts in flight in this replica',
    registers: [registry],
    collect() {
      if (source) this.set(source.teamsSending());
    },
  });
  new promClient.Gauge({
    name: 'worklane_delivery_teams_at_budget',
    help: 'Teams using their whole concurrency budget (DELIVERY_CONCURRENCY_PER_TEAM) in this replica',
    registers: [registry],
    collect() {
      if (source) this.set(source.teamsAtBudget());
    },
  });
  new promClient.Gauge({
    name: 'worklane_webhook_circuit_breakers',
    help: 'Endpoints by circuit breaker state in this replica (closed: those with recent failures)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      if (!source) return;
      for (const [state, count] of Object.entries(source.breakers())) this.set({ state }, count);
    },
  });
  let backlogSize: (() => Promise<number>) | undefined;
  new promClient.Gauge({
    name: 'worklane_delivery_fanout_backlog_events',
    help: "Events waiting for their team's fan-out budget (DELIVERY_FANOUT_PER_TEAM_PER_SECOND), all replicas together",
    registers: [registry],
    async collect() {
      // A scrape while the database is away keeps the last value rather than failing /metrics.
      const size = await backlogSize?.().catch(() => undefined);
      if (size !== undefined) this.set(size);
    },
  });
  return {
    observeQueue(next) {
      source = next;
    },
    observeBacklog(size) {
      backlogSize = size;
    },
    fanOutQueued: new promClient.Counter({
      name: 'worklane_delivery_fanout_queued_total',
      help: 'Events put in the fan-out backlog because their team was over its fan-out budget',
      registers: [registry],
    }),
    attemptsStarted: new promClient.Counter({
      name: 'worklane_delivery_attempts_started_total',
      help: 'Delivery attempts started, by path: at_once (stored already claimed by the fan-out and sent with no claim) or claim',
      labelNames: ['path'],
      registers: [registry],
    }),
    connectionWaits: new promClient.Counter({
      name: 'worklane_delivery_connection_waits_total',
      help: "Delivery attempts that waited for their team's pace of new receiver connections (DELIVERY_TEAM_CONNECTIONS_PER_SECOND) before opening one",
      registers: [registry],
    }),
    connectionWaitSeconds: new promClient.Counter({
      name: 'worklane_delivery_connection_wait_seconds_total',
      help: "Time delivery attempts waited for their team's pace of new receiver connections, all attempts together",
      registers: [registry],
    }),
    scheduleDelay: new promClient.Histogram({
      name: 'worklane_delivery_schedule_delay_seconds',
      help: 'Time from a delivery attempt being due to its start: how long it waited for a sending slot',
      buckets: DELAY_BUCKETS,
      registers: [registry],
    }),
    teamInFlight: new promClient.Histogram({
      name: 'worklane_delivery_team_in_flight',
      help: "A team's attempts in flight in this replica, observed as each of its attempts starts",
      buckets: IN_FLIGHT_BUCKETS,
      registers: [registry],
    }),
    deferred: new promClient.Counter({
      name: 'worklane_webhook_deliveries_deferred_total',
      help: "Deliveries moved to the end of their endpoint's circuit-breaker cool-down (no attempt counted)",
      registers: [registry],
    }),
    breakerTransitions: new promClient.Counter({
      name: 'worklane_webhook_circuit_transitions_total',
      help: 'Circuit breaker transitions of endpoints, by the state entered (open, closed)',
      labelNames: ['to'],
      registers: [registry],
    }),
    deliveries: new promClient.Counter({
      name: 'worklane_webhook_deliveries_total',
      help: 'Deliveries that reached a final state, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    attemptDuration: new promClient.Histogram({
      name: 'worklane_webhook_attempt_duration_seconds',
      help: 'Duration of delivery attempts, by result (status class or error)',
      labelNames: ['result'],
      buckets: ATTEMPT_BUCKETS,
      registers: [registry],
    }),
    lag: new promClient.Histogram({
      name: 'worklane_webhook_delivery_lag_seconds',
      help: 'Time from an event being created to its successful delivery',
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
    retriesScheduled: new promClient.Counter({
      name: 'worklane_webhook_retries_scheduled_total',
      help: 'Failed attempts after which another attempt was scheduled',
      registers: [registry],
    }),
  };
}

/** `2xx`... `5xx`, or `error` when there was no answer. */
export const attemptResult = (statusCode: number | null) => (statusCode === null ? 'error' : `${Math.floor(statusCode / 100)}xx`);
