// The per-team quota on API tokens (TEAM_MAX_API_TOKENS): CreateToken beyond it answers
// RESOURCE_EXHAUSTED naming the limit, race-free, per team; revoking a token frees a slot.
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { loadProto, type TokenProto, type tokenV1 } from '@worklane/proto';
import { signerOf } from '@worklane/testing';
import { startInProcessTokenService, type InProcessTokenService } from './support/in-process';

jest.setTimeout(60_000);

const MAX_TOKENS = 4;

let service: InProcessTokenService;
let tokens: tokenV1.TokenServiceClient;
let accounts: tokenV1.AccountServiceClient;

beforeAll(async () => {
  service = await startInProcessTokenService('token-quota-test', { poolMax: 8, deps: { tokenCacheMaxTtlMs: 0, maxTokensPerTeam: MAX_TOKENS } });
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  const console = signerOf(service.keys, 'console');
  tokens = createGrpcClient(v1.TokenService, service.address, { caller: 'console', signingKey: console.key });
  accounts = createGrpcClient(v1.AccountService, service.address, { caller: 'console', signingKey: console.key });
});

afterAll(async () => {
  tokens?.close();
  accounts?.close();
  await service?.stop();
});

type Client = Record<string, (...args: any[]) => unknown>;
const call = <Response>(client: unknown, method: string, request: object) =>
  unaryCall<Response>((metadata, options, done) => (client as Client)[method]!(request, metadata, options, done));

let sequence = 0;
async function owner() {
  sequence++;
  const user = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email: `quota${sequence}-${Date.now()}@example.test`, password: 'correct horse', name: '' });
  const team = await call<tokenV1.Team__Output>(accounts, 'CreateTeam', { name: `Quota ${sequence}`, owner_user_id: user.id });
  return { userId: Number(user.id), teamId: Number(team.id) };
}

const createToken = (who: { userId: number; teamId: number }, name: string) =>
  call<tokenV1.CreateTokenResponse__Output>(tokens, 'CreateToken', { team_id: who.teamId, user_id: who.userId, name });

async function settle(promises: Promise<unknown>[]) {
  const results = await Promise.allSettled(promises);
  return {
    created: results.filter((result) => result.status === 'fulfilled').length,
    refusals: results.flatMap((result) => (result.status === 'rejected' ? [result.reason as grpc.ServiceError] : [])),
  };
}

it(`creates at most ${MAX_TOKENS} tokens per team, even when the creates race`, async () => {
  const me = await owner();
  const { created, refusals } = await settle(Array.from({ length: MAX_TOKENS + 6 }, (_, i) => createToken(me, `racing ${i}`)));
  expect(created).toBe(MAX_TOKENS);
  expect(refusals).toHaveLength(6);
  for (const refusal of refusals) {
    expect(refusal.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(refusal.details).toBe(`The team has reached its limit of ${MAX_TOKENS} API tokens.`);
  }
  const listed = await call<tokenV1.ListTokensResponse__Output>(tokens, 'ListTokens', { team_id: me.teamId });
  expect(listed.tokens).toHaveLength(MAX_TOKENS);

  // Another team is not affected.
  const other = await owner();
  await expect(createToken(other, 'first')).resolves.toMatchObject({ value: expect.stringMatching(/^wl_/) });
});

it('frees a slot when a token is revoked', async () => {
  const me = await owner();
  const made = [];
  for (let i = 0; i < MAX_TOKENS; i++) made.push(await createToken(me, `token ${i}`));
  await expect(createToken(me, 'one too many')).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
  await call(tokens, 'RevokeToken', { team_id: me.teamId, token_id: made[0]!.token!.id });
  await expect(createToken(me, 'replacement')).resolves.toMatchObject({ token: expect.objectContaining({ name: 'replacement' }) });
});
