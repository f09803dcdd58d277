// Which deliveries the sender takes straight from the fan-out (the fast path), with a store that
// only answers the claims of an idle sender: nothing is ever due.
import { testSenderOptions } from '../../test/support/sender-options';
import { webhookTarget } from '../../test/support/webhook-target';
import type { WebhookTarget } from '../clients/webhooks';
import type { ClaimedDelivery } from '../data/deliveries';
import { DeliverySender } from './sender';

const webhook = (id: number, teamId: number, rateLimitPerSecond: number | null = null): WebhookTarget => webhookTarget(id, teamId, { rateLimitPerSecond });

function idleSender(released: string[] = []) {
  const store = {
    claimDue: async () => ({ deliveries: [], pacedDueAtMs: null }),
    deferUntil: async () => 0,
    recordAttemptsAndFollow: async () => ({ recorded: [], nextOfIssueDue: 0 }),
    release: async (delivery: ClaimedDelivery) => {
      released.push(delivery.id);
    },
  };
  return new DeliverySender(testSenderOptions(store));
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
