import { createLogger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import { RateLimiter } from './rate-limit';
import { RateLimitSync } from './rate-limit-sync';

type Request = tokenV1.SyncRateLimitsRequest;

/** A token service that keeps one shared level per key in memory, or fails while `down`. */
function fakeTokenService(burstOf: (scope: string) => number) {
  const shared = new Map<string, number>();
  const calls: Request[] = [];
  const service = {
    down: false,
    calls,
    SyncRateLimits(request: Request, _metadata: unknown, _options: unknown, done: (error: Error | null, response?: tokenV1.SyncRateLimitsResponse__Output) => void) {
      calls.push(request);
      if (service.down) return done(Object.assign(new Error('unavailable'), { code: 14 }));
      const levels = (request.usage ?? []).map((usage) => {
        const key = `${usage.scope}:${usage.id}`;
        const level = (shared.get(key) ?? burstOf(String(usage.scope))) - Number(usage.spent);
        shared.set(key, level);
        return { scope: usage.scope as tokenV1.RateLimitScope__Output, id: Number(usage.id), level };
      });
      done(null, { levels });
    },
  };
  return service;
}

function setUp() {
  const token = new RateLimiter(0.001, 10);
  const team = new RateLimiter(0.001, 20);
  const service = fakeTokenService((scope) => (scope === 'RATE_LIMIT_SCOPE_TEAM' ? 20 : 10));
  const sync = new RateLimitSync({ client: service as never, limiters: { token, team }, intervalMs: 10, timeoutMs: 1_000, logger: createLogger('gateway', 'silent') });
  return { token, team, service, sync };
}

describe('RateLimitSync', () => {
  it('reports each key once with its allowance and takes the shared level back', async () => {
    const { token, team, service, sync } = setUp();
    token.take(1);
    team.take(5);
    team.take(5);
    await sync.pass();
    expect(service.calls[0]!.usage).toEqual([
      { scope: 'RATE_LIMIT_SCOPE_TOKEN', id: 1, spent: 1, per_second: 0.001, burst: 10 },
      { scope: 'RATE_LIMIT_SCOPE_TEAM', id: 5, spent: 2, per_second: 0.001, burst: 20 },
    ]);
    // Another replica spends 15 of the team's allowance.
    await new Promise<void>((resolve) =>
      service.SyncRateLimits({ usage: [{ scope: 'RATE_LIMIT_SCOPE_TEAM', id: 5, spent: 15, per_second: 0.001, burst: 20 }] }, null, null, () => resolve()),
    );
    await sync.pass();
    expect(team.state(5)?.remaining).toBe(3);
    expect(service.calls[2]!.usage).toEqual([
      { scope: 'RATE_LIMIT_SCOPE_TOKEN', id: 1, spent: 0, per_second: 0.001, burst: 10 },
      { scope: 'RATE_LIMIT_SCOPE_TEAM', id: 5, spent: 0, per_second: 0.001, burst: 20 },
    ]);
  });

  it('keeps limiting alone while the token service is down, and reports the spending once it is back', async () => {
    const { token, service, sync } = setUp();
    service.down = true;
    for (let i = 0; i < 3; i++) expect(token.take(1).allowed).toBe(true);
    await expect(sync.pass()).rejects.toThrow('unavailable');
    expect(token.state(1)?.remaining).toBe(7);
    token.take(1);
    await expect(sync.pass()).rejects.toThrow('unavailable');
    service.down = false;
    await sync.pass();
    expect(service.calls.at(-1)!.usage).toEqual([{ scope: 'RATE_LIMIT_SCOPE_TOKEN', id: 1, spent: 4, per_second: 0.001, burst: 10 }]);
    expect(token.state(1)?.remaining).toBe(6);
  });
});
