import type { WebhookResponse } from '@worklane/webhooks';
import { jittered } from '@worklane/webhooks/retry-schedule';

/**
 * closed: attempts flow. open: the endpoint failed too often; its deliveries wait (deferred in the
 * log, never claimed) until the cool-down ends. half_open: the cool-down ended; one attempt, the
 * probe, may go; its success closes the breaker, its failure opens it again for longer.
 */
export type CircuitState = 'closed' | 'open' | 'half_open';

/**
 * DELIVERY_DEFER_BATCH_SIZE's default: deliveries of open endpoints moved to their probe time by
 * one statement at most (DeliverySender.deferOpenEndpoints).
 */
export const DEFAULT_DEFER_BATCH_SIZE = 500;

export interface CircuitBreakerOptions {
  /** Consecutive failed attempts that open the breaker. */
  failureThreshold: number;
  /** The first cool-down; each failed probe doubles it. */
  coolDownMs: number;
  /** The longest cool-down. */
  maxCoolDownMs: number;
  now?: () => number;
  /**
   * A number in [0, 1); Math.random by default. Each wait is the cool-down spread by RETRY_JITTER
   * either way, so endpoints that failed together (one team's, behind one outage) are probed at
   * different times rather than in one wave of connections.
   */
  random?: () => number;
}

/** What other code (an endpoint health API, the sender) may know about one endpoint. */
export interface EndpointHealth {
  webhookId: number;
  state: CircuitState;
  consecutiveFailures: number;
  /** When the breaker last opened (ms since the epoch), null while closed. */
  openedAt: number | null;
  /** When an open breaker lets its probe go, null unless open. */
  retryAt: number | null;
}

interface Endpoint {
  state: CircuitState;
  failures: number;
  coolDownMs: number;
  openedAt: number | null;
  retryAt: number | null;
}

/**
 * Whether an attempt counts against its endpoint: no answer at all (timeouts, refused connections,
 * TLS errors, a host that does not resolve), a 5xx or a 429. Other answers, even refusals such as
 * 404, come back quickly and cost nothing to repeat.
 */
export const isEndpointFailure = (response: Pick<WebhookResponse, 'statusCode'>) => response.statusCode === null || response.statusCode >= 500 || response.statusCode === 429;

/**
 * One circuit breaker per endpoint (webhook), in this replica. Endpoints in the closed state with
 * no recent failure are not remembered, so memory follows the number of failing endpoints.
 */
export class CircuitBreakers {
  private readonly endpoints = new Map<number, Endpoint>();
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The current state; an open breaker whose cool-down ended is half-open. */
  state(webhookId: number): CircuitState {
    return this.refresh(webhookId)?.state ?? 'closed';
  }

  health(webhookId: number): EndpointHealth {
    const endpoint = this.refresh(webhookId);
    return {
      webhookId,
      state: endpoint?.state ?? 'closed',
      consecutiveFailures: endpoint?.failures ?? 0,
      openedAt: endpoint?.state === 'closed' ? null : (endpoint?.openedAt ?? null),
      retryAt: endpoint?.state === 'open' ? endpoint.retryAt : null,
    };
  }

  /** Endpoints whose breaker is not closed, refreshed. */
  notClosed(): EndpointHealth[] {
    return [...this.endpoints.keys()].map((webhookId) => this.health(webhookId)).filter((health) => health.state !== 'closed');
  }

  /** How many endpoints are in each state (closed: those remembered with recent failures). */
  counts(): Record<CircuitState, number> {
    const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
    for (const webhookId of [...this.endpoints.keys()]) counts[this.state(webhookId)] += 1;
    return counts;
  }

  /**
   * Records an attempt's outcome. Resolves to the transition it caused: 'opened' when the breaker
   * opened (or opened again after a failed probe), 'closed' when a success closed it.
   */
  record(webhookId: number, failed: boolean): 'opened' | 'closed' | undefined {
    const endpoint = this.refresh(webhookId);
    if (!failed) {
      if (!endpoint) return undefined;
      this.endpoints.delete(webhookId);
      return endpoint.state === 'closed' ? undefined : 'closed';
    }
    const now = this.now();
    if (!endpoint) {
      const fresh: Endpoint = { state: 'closed', failures: 1, coolDownMs: this.options.coolDownMs, openedAt: null, retryAt: null };
      this.endpoints.set(webhookId, fresh);
      return this.open(fresh, now);
    }
    endpoint.failures += 1;
    if (endpoint.state === 'half_open') {
      // The probe failed: wait longer before the next one.
      endpoint.coolDownMs = Math.min(this.options.maxCoolDownMs, endpoint.coolDownMs * 2);
      return this.open(endpoint, now, true);
    }
    // Failures of attempts that were already in flight when it opened change nothing.
    if (endpoint.state === 'open') return undefined;
    return this.open(endpoint, now);
  }

  private open(endpoint: Endpoint, now: number, force = false): 'opened' | undefined {
    if (!force && endpoint.failures < this.options.failureThreshold) return undefined;
    endpoint.state = 'open';
    endpoint.openedAt = now;
    endpoint.retryAt = now + Math.round(jittered(endpoint.coolDownMs, this.options.random));
    return 'opened';
  }

  private refresh(webhookId: number): Endpoint | undefined {
    const endpoint = this.endpoints.get(webhookId);
    if (endpoint?.state === 'open' && (endpoint.retryAt ?? 0) <= this.now()) endpoint.state = 'half_open';
    return endpoint;
  }
}
