// Idempotency-Key on the delivery service's POSTs (ping, redeliver) through the gateway: a retry
// is answered with the first answer and no second delivery is made.
import { randomUUID } from 'node:crypto';
import { createWebhook, eventually, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

let delivery: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  delivery = await startDeliverySystem();
  team = await delivery.newTeam('Idempotent');
}, 120_000);
afterAll(async () => {
  await delivery?.stop();
});

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

it('pings and redelivers once per key: the retry replays the first answer', async () => {
  const webhook = await createWebhook(team, { url: delivery.receiver.url('/idempotent'), events: ['issue.created'] });
  const ping = `/teams/${team.team_id}/webhooks/${webhook.id}/ping`;
  const key = randomUUID();
  const first = await team.client.post(ping, undefined, withKey(key));
  expect(first.status).toBe(201);
  const retry = await team.client.post(ping, undefined, withKey(key));
  expect(retry.status).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(retry.text).toBe(first.text);

  const redeliver = `/teams/${team.team_id}/deliveries/${first.body.id}/redeliver`;
  const redeliverKey = randomUUID();
  const redelivered = await team.client.post(redeliver, undefined, withKey(redeliverKey));
  expect(redelivered.status).toBe(201);
  const again = await team.client.post(redeliver, undefined, withKey(redeliverKey));
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(redelivered.body.id);

  // One ping and one redelivery in the log, and the receiver got each once.
  const log = await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`);
  expect(log.body.data.map((entry: { id: string }) => entry.id).sort()).toEqual([first.body.id, redelivered.body.id].sort());
  await eventually(
    async () => delivery.receiver.at('/idempotent').length,
    (count) => count >= 2,
    20_000,
    'both deliveries',
  );
});
