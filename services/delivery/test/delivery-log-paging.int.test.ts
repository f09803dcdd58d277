// The delivery log pages by default (an extension list): newest first by (created_at, id), an
// opaque cursor, next_cursor in the body and a Link header on the gateway's public path.
import { createWebhook, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

const DEFAULT_LIMIT = 3;
const MAX_LIMIT = 5;

let env: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem({ delivery: { LIST_DEFAULT_LIMIT: DEFAULT_LIMIT, LIST_MAX_LIMIT: MAX_LIMIT } });
  team = await env.newTeam('Paging team');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

const nextLink = (headers: Record<string, string>) => /<([^>]*)>;\s*rel="next"/.exec(headers.link ?? '')?.[1];

async function webhookWithPings(count: number): Promise<{ path: string; ids: string[] }> {
  const webhook = await createWebhook(team, { url: env.receiver.url('/paging'), events: ['issue.created'] });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const ping = await team.client.post(`/teams/${team.team_id}/webhooks/${webhook.id}/ping`);
    expect(ping.status).toBe(201);
    ids.push(ping.body.id);
  }
  return { path: `/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`, ids };
}

it(`serves ${DEFAULT_LIMIT} deliveries per page by default, newest first, to the last page`, async () => {
  const { path, ids } = await webhookWithPings(7);
  const sizes: number[] = [];
  const seen: string[] = [];
  let response = await team.client.get(path);
  for (;;) {
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'next_cursor']);
    sizes.push(response.body.data.length);
    seen.push(...response.body.data.map((delivery: { id: string }) => delivery.id));
    const link = nextLink(response.headers);
    if (response.body.next_cursor === null) {
      expect(link).toBeUndefined();
      break;
    }
    expect(link).toBe(`/api/v1${path}?limit=${DEFAULT_LIMIT}&cursor=${response.body.next_cursor}`);
    response = await team.client.get(`${env.system.gatewayUrl}${link}`);
  }
  expect(sizes).toEqual([3, 3, 1]);
  expect(seen).toEqual([...ids].reverse());
});

it('takes ?limit= up to the maximum and refuses more, or a tampered cursor, with 422', async () => {
  const { path } = await webhookWithPings(2);
  const page = await team.client.get(path, { query: { limit: 1 } });
  expect(page.body.data).toHaveLength(1);
  expect(typeof page.body.next_cursor).toBe('string');
  const tooMany = await team.client.get(path, { query: { limit: MAX_LIMIT + 1 } });
  expect(tooMany.status).toBe(422);
  expect(tooMany.body.errors).toEqual({ limit: [`The limit parameter must be an integer between 1 and ${MAX_LIMIT}.`] });
  const wrongKey = Buffer.from(JSON.stringify({ v: 1, l: 'deliveries', k: ['yesterday', 'x'] })).toString('base64url');
  for (const cursor of [wrongKey, `${page.body.next_cursor}A`, Buffer.from(JSON.stringify({ v: 1, l: 'issues', k: 3 })).toString('base64url')]) {
    const response = await team.client.get(path, { query: { cursor } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['cursor']);
  }
});
