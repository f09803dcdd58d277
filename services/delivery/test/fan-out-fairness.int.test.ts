// The event consumer against a real PostgreSQL and NATS JetStream: each fan-out statement carries
// one team's events, and one team holds all the fan-out statements but one at most. A team whose
// fan-out is slow (here: its webhook look-ups are held, as a slow webhook service or a large
// statement would hold them) leaves a statement free for another team, whose events are fanned out
// while the first team's are still waiting. Every wait is on a condition, never on a duration.
import type { WebhookDirectory } from '../src/clients/webhooks';
import { startConsumerStack, type ConsumerStack } from './support/consumer-stack';
import { publishIssueCreated } from './support/issue-events';
import { eventually } from './support/system';
import { webhookTarget } from './support/webhook-target';

jest.setTimeout(60_000);

const FLOOD_TEAM = 71;
const OTHER_TEAM = 72;

let stack: ConsumerStack;

/** Webhook look-ups of the flooding team wait until released (while `holding`); the other team's answer at once. */
const held: { teamId: number; release: () => void }[] = [];
let holding = true;
const directory: WebhookDirectory = {
  async listSubscriptions(teamId) {
    const answer = [webhookTarget(teamId * 100 + 1, teamId)];
    if (teamId !== FLOOD_TEAM || !holding) return answer;
    await new Promise<void>((resolve) => held.push({ teamId, release: resolve }));
    return answer;
  },
  getWebhook: async () => undefined,
  disableWebhook: async () => undefined,
};

beforeAll(async () => {
  stack = await startConsumerStack({ name: 'fan-out-fairness-test', webhooks: directory, poolMax: 8 });
}, 60_000);
afterAll(async () => {
  holding = false;
  for (const entry of held.splice(0)) entry.release();
  await stack?.stop();
});

const publish = (teamId: number, issueId: number) => publishIssueCreated(stack.connection, teamId, issueId, 'FAIR');

const deliveriesOf = async (teamId: number) =>
  (await stack.pool.query<{ event_id: string; stream_seq: string }>('SELECT event_id, stream_seq FROM deliveries WHERE team_id = $1 ORDER BY stream_seq', [teamId])).rows;

it("fans out another team's event while one team's fan-out statements are held, and the held team's events in order afterwards", async () => {
  // The flooding team's first two events each take a statement (their look-ups are held); its
  // third waits for one of them, as one team holds all the statements but one.
  const flood = [await publish(FLOOD_TEAM, 1)];
  await eventually(
    async () => held.length,
    (count) => count === 1,
    20_000,
    "the flooding team's first statement",
  );
  flood.push(await publish(FLOOD_TEAM, 2));
  await eventually(
    async () => held.length,
    (count) => count === 2,
    20_000,
    "the flooding team's second statement",
  );
  flood.push(await publish(FLOOD_TEAM, 3));

  // The other team's event is fanned out meanwhile, through the statement left free.
  const other = await publish(OTHER_TEAM, 4);
  const otherRows = await eventually(
    () => deliveriesOf(OTHER_TEAM),
    (rows) => rows.length === 1,
    20_000,
    "the other team's delivery",
  );
  expect(otherRows[0]!.event_id).toBe(other);
  expect(held).toHaveLength(2);
  expect(await deliveriesOf(FLOOD_TEAM)).toEqual([]);

  // Released, the flooding team's events are all fanned out, in the order they were published.
  const floodRows = await eventually(
    async () => {
      for (const entry of held.splice(0)) entry.release();
      return deliveriesOf(FLOOD_TEAM);
    },
    (rows) => rows.length === flood.length,
    20_000,
    "the flooding team's deliveries",
  );
  expect(floodRows.map((row) => row.event_id)).toEqual(flood);
});
