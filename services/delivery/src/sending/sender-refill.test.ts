// How the sender refills its slots while a backlog drains, with a store that plays the claim's
// race deterministically: a claim starts while attempts are still in flight (so the budgets let it
// take only part of what is due) and those attempts end before it answers. The sender must claim
// again as their slots free up, not wait for its poll interval (a minute here).
import { testSenderOptions } from '../../test/support/sender-options';
import type { WebhookDirectory } from '../clients/webhooks';
import type { ClaimedDelivery, ClaimResult, DeliveryStore } from '../data/deliveries';
import type { ClaimBudget } from './budgets';
import { DeliverySender } from './sender';

const TEAM = 1;
const WEBHOOK = 10;
const PER_WEBHOOK = 2;

/**
 * A backlog of one endpoint's deliveries, claimed within the budget each claim is given. The
 * attempts of a claim run until the next claim starts (but the very first, which ends at once to
 * set things going, and the last claim's, which end at once); a claim that starts with attempts
 * in flight answers once they have ended and the sender has been woken since it started (as a
 * claim that takes longer than the sender's refill delay).
 */
class RacingStore {
  readonly ended: string[] = [];
  private readonly due: ClaimedDelivery[];
  private held: (() => void)[] = [];
  private readonly endings = new Map<string, Promise<void>>();
  private wakeWaiters: (() => void)[] = [];
  private claims = 0;

  constructor(size: number) {
    this.due = Array.from({ length: size }, (_, index) => ({
      id: `delivery-${index}`,
      eventId: `event-${index}`,
      event: 'issue.created',
      teamId: TEAM,
      webhookId: WEBHOOK,
      body: Buffer.from('{}'),
      traceContext: null,
      attemptCount: 0,
      eventCreatedAtMs: 0,
      dueAtMs: 0,
      isRedelivery: false,
      leaseToken: 'lease',
    }));
  }

  get left(): number {
    return this.due.length;
  }

  /** The sender was woken (or the test gives up waiting). */
  woken(): void {
    for (const resolve of this.wakeWaiters.splice(0)) resolve();
  }

  async claimDue(budget: ClaimBudget): Promise<ClaimResult> {
    const first = this.claims++ === 0;
    const inFlight = [...this.endings.values()];
    if (inFlight.length > 0) {
      const wokenSince = new Promise<void>((resolve) => this.wakeWaiters.push(resolve));
      for (const release of this.held.splice(0)) release();
      await Promise.all(inFlight);
      await wokenSince;
    }
    const blocked = budget.blockedWebhooks.includes(WEBHOOK) || budget.blockedTeams.includes(TEAM);
    const allowance = blocked ? 0 : Math.min(budget.limit, new Map(budget.webhookAllowances).get(WEBHOOK) ?? budget.perWebhook);
    const taken = this.due.splice(0, allowance);
    taken.forEach((delivery, index) => {
      const atOnce = (first && index === 0) || this.due.length === 0;
      const ending = atOnce ? Promise.resolve() : new Promise<void>((resolve) => this.held.push(resolve));
      this.endings.set(
        delivery.id,
        ending.then(() => {
          this.endings.delete(delivery.id);
        }),
      );
    });
    return { deliveries: taken, pacedDueAtMs: null };
  }

  /** The webhook no longer exists: each attempt ends here, without a request. */
  async abandon(delivery: ClaimedDelivery): Promise<void> {
    await this.endings.get(delivery.id);
    this.ended.push(delivery.id);
  }

  async deferUntil(): Promise<number> {
    return 0;
  }
}

describe('DeliverySender draining a backlog', () => {
  let sender: DeliverySender | undefined;
  afterEach(async () => {
    await sender?.stop();
  });

  it('claims again as attempts free their slots, even when they ended while the claim ran', async () => {
    const store = new RacingStore(40);
    // The poll interval (a minute) is far longer than this test may take: only wake-ups drain the backlog in time.
    sender = new DeliverySender(
      testSenderOptions(store as unknown as DeliveryStore, {
        webhooks: { getWebhook: async () => undefined } as unknown as WebhookDirectory,
        perTeamConcurrency: 10,
        perWebhookConcurrency: PER_WEBHOOK,
      }),
    );
    const wake = sender.wake.bind(sender);
    sender.wake = () => {
      wake();
      store.woken();
    };
    sender.start();
    const deadline = Date.now() + 20_000;
    while (store.ended.length < 40 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    store.woken();
    expect(store.left).toBe(0);
    expect(store.ended).toHaveLength(40);
  }, 30_000);
});
