// Which deliveries the sender takes straight from the fan-out (the fast path), with a store that
// only answers the claims of an idle sender: nothing is ever due.
import { createLogger, promClient } from '@worklane/observability';
import type { AllowedCidrs, PinnedDispatchers } from '@worklane/webhooks';
import { webhookTarget } from '../../test/support/webhook-target';
import type { WebhookDirectory, WebhookTarget } from '../clients/webhooks';
import type { ClaimedDelivery, DeliveryStore } from '../data/deliveries';
import { createDeliveryMetrics } from '../metrics';
import { DeliverySender } from './sender';

const webhook = (id: number, teamId: number, rateLimitPerSecond: number | null = null): WebhookTarget => webhookTarget(id, teamId, { rateLimitPerSecond });

function idleSender(released: string[] = []) {
  const store = {
    claimDue: async () => ({ deliveries: [], pacedDueAtMs: null, moreDue: false }),
    deferUntil: async () => 0,
    recordAttemptsAndFollow: async () => ({ recorded: [], nextOfIssueDue: 0 }),
    release: async (delivery: ClaimedDelivery) => {
      released.push(delivery.id);
    },
  } as unknown as DeliveryStore;
  return new DeliverySender({
    store,
    webhooks: {} as WebhookDirectory,
    dispatchers: {} as PinnedDispatchers,
    logger: createLogger('delivery-test', 'silent'),
    metrics: createDeliveryMetrics(new promClient.Registry()),
    allowedCidrs: {} as AllowedCidrs,
    userAgent: 'test',
    schedule: [0, 1],
    timeoutMs: 1_000,
    headersTimeoutMs: 1_000,
    dnsTimeoutMs: 1_000,
    concurrency: 10,
    perTeamConcurrency: 2,
    perWebhookConcurrency: 2,
    breaker: { failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000 },
    pollIntervalMs: 60_000,
    leaseMs: 30_000,
  });
}

describe('DeliverySender.reserveAtOnce', () => {
  let sender: DeliverySender;
  afterEach(async () => {
    await sender?.stop();
  });

  it('gives a slot for an endpoint without a rate limit, within the budgets, and none for a rate-limited endpoint', () => {
    sender = idleSender();
    sender.start();
    expect(sender.leaseMs).toBe(30_000);
    const slot = sender.reserveAtOnce(webhook(1, 1));
    expect(slot).toBeDefined();
    expect(sender.inFlightOfTeam(1)).toBe(1);
    // Only the claim spends a limited endpoint's tokens.
    expect(sender.reserveAtOnce(webhook(2, 1, 5))).toBeUndefined();
    expect(sender.inFlightOfTeam(1)).toBe(1);
    slot!.release();
    expect(sender.inFlightOfTeam(1)).toBe(0);
  });

  it('gives none to a team at its budget', () => {
    sender = idleSender();
    sender.start();
    const held = [sender.reserveAtOnce(webhook(1, 7)), sender.reserveAtOnce(webhook(2, 7))];
    expect(held.every(Boolean)).toBe(true);
    expect(sender.reserveAtOnce(webhook(3, 7))).toBeUndefined();
    expect(sender.reserveAtOnce(webhook(4, 8))).toBeDefined();
  });

  it('gives none before it starts or once it stops, and gives back a delivery handed to it while stopping', async () => {
    const released: string[] = [];
    sender = idleSender(released);
    expect(sender.reserveAtOnce(webhook(1, 1))).toBeUndefined();
    sender.start();
    const slot = sender.reserveAtOnce(webhook(1, 1))!;
    await sender.stop();
    expect(sender.reserveAtOnce(webhook(1, 1))).toBeUndefined();
    const delivery = { id: 'delivery-1', teamId: 1, webhookId: 1, leaseToken: 'lease' } as ClaimedDelivery;
    sender.sendAtOnce(delivery, webhook(1, 1), slot);
    expect(released).toEqual(['delivery-1']);
    expect(sender.inFlightOfTeam(1)).toBe(0);
  });
});
