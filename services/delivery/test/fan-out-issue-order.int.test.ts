// The event consumer against a real PostgreSQL and NATS JetStream: two events of one issue are
// never stored by concurrent fan-out statements. The later one's statement could commit first, and
// a claim between the two commits would find its delivery with no earlier one of the issue pending
// and send it first. The first event's statement is held by the test; every wait is on a condition.
import type { WebhookDirectory } from '../src/clients/webhooks';
import type { EventFanOut } from '../src/data/deliveries';
import { startConsumerStack, type ConsumerStack } from './support/consumer-stack';
import { publishIssueCreated } from './support/issue-events';
import { eventually } from './support/system';
import { webhookTarget } from './support/webhook-target';

jest.setTimeout(60_000);

const TEAM = 82;
const WEBHOOK = 8_201;

const directory: WebhookDirectory = {
  listSubscriptions: async (teamId) => [webhookTarget(WEBHOOK, teamId)],
  getWebhook: async () => undefined,
  disableWebhook: async () => undefined,
};

let stack: ConsumerStack;
/** Event ids in the order their fan-out statements started, and in the order they committed. */
const started: string[] = [];
const committed: string[] = [];
/** The issue whose first statement waits for `release` before it runs, and that statement's event. */
const HELD_ISSUE = 5;
let heldEvent: string | undefined;
let release: () => void = () => {};
const held = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  stack = await startConsumerStack({ name: 'fan-out-issue-order-test', webhooks: directory, poolMax: 6, consumer: { concurrency: 8 } });
  const store = stack.store.createForEvents.bind(stack.store);
  stack.store.createForEvents = async (events: EventFanOut[], ...rest) => {
    started.push(...events.map((fanOut) => fanOut.event.id));
    const first = heldEvent === undefined ? events.find((fanOut) => fanOut.event.issue_id === HELD_ISSUE) : undefined;
    if (first) {
      heldEvent = first.event.id;
      await held;
    }
    const created = await store(events, ...rest);
    committed.push(...events.map((fanOut) => fanOut.event.id));
    return created;
  };
}, 60_000);
afterAll(async () => {
  release();
  await stack?.stop();
});

it("stores an issue's later event only after its earlier one, while other issues' events go on", async () => {
  const first = await publishIssueCreated(stack.connection, TEAM, HELD_ISSUE, 'ORD');
  // The held statement starts alone: events received in one turn share a statement, and another
  // issue's event sharing the held one's would wait with it.
  await eventually(
    async () => heldEvent,
    (event) => event === first,
    20_000,
    "the issue's first event's statement to start",
  );
  const later = await publishIssueCreated(stack.connection, TEAM, HELD_ISSUE, 'ORD');
  const otherIssue = await publishIssueCreated(stack.connection, TEAM, 6, 'ORD');

  // Another issue's event, received after both, is stored while the first is held...
  await eventually(
    async () => [...committed],
    (events) => events.includes(otherIssue),
    20_000,
    "the other issue's event to be stored",
  );
  // ...and the held issue's later event is not, nor is its statement started (without the wait it
  // would have started before the other issue's: one team's events go to statements in order).
  expect(started).not.toContain(later);
  expect(committed).not.toContain(later);

  release();
  await eventually(
    async () => [...committed],
    (events) => events.includes(later),
    20_000,
    "the issue's later event to be stored",
  );
  expect(committed.indexOf(first)).toBeLessThan(committed.indexOf(later));
});
