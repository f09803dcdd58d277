import { join } from 'node:path';
import { createLogger } from './logger';
import { promClient } from './metrics';
import { ServiceThread, ThreadedRegistry } from './service-thread';

const FIXTURE = join(__dirname, '..', 'test', 'fixtures', 'counting-thread.mjs');
const logger = createLogger('test', 'silent');

describe('ServiceThread', () => {
  it("exchanges messages with its thread, serves the thread's metrics with the service's own, and stops it", async () => {
    const thread = new ServiceThread({ file: FIXTURE, name: 'counting', logger, onFailure: () => {} });
    const done: number[] = [];
    let stopping = false;
    thread.on('test:done', (message) => done.push(message.n as number));
    thread.on('test:stopping', () => (stopping = true));
    await thread.start();
    for (const n of [1, 2, 3]) thread.post({ kind: 'test:work', n });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (done.length < 3) return;
        clearInterval(check);
        resolve();
      }, 5);
    });
    expect(done).toEqual([1, 2, 3]);

    const own = new promClient.Registry();
    own.setDefaultLabels({ service: 'test-service' });
    new promClient.Counter({ name: 'worklane_test_own_total', help: 'A counter of the main thread', registers: [own] }).inc(2);
    const text = await new ThreadedRegistry(own, [thread]).metrics();
    expect(text).toContain('worklane_test_own_total{service="test-service"} 2');
    expect(text).toContain('worklane_test_thread_messages_total{service="test-service"} 3');
    expect(text).toMatch(/^worklane_thread_eventloop_lag_p99_seconds\{thread="counting",service="test-service"\} [\d.e-]+$/m);

    await thread.stop(5_000);
    expect(stopping).toBe(true);
    // Once stopped, the thread adds nothing, and the service's own metrics are still served.
    expect(await new ThreadedRegistry(own, [thread]).metrics()).not.toContain('worklane_test_thread_messages_total');
  });

  it('rejects start when the thread fails before it is ready', async () => {
    const thread = new ServiceThread({ file: join(__dirname, '..', 'test', 'fixtures', 'missing-thread.mjs'), name: 'missing', logger, onFailure: () => {} });
    await expect(thread.start()).rejects.toThrow();
  });

  it('reports a thread that ends by itself after its start', async () => {
    const failures: unknown[] = [];
    const thread = new ServiceThread({ file: FIXTURE, name: 'counting', logger, onFailure: (error) => failures.push(error) });
    await thread.start();
    // Ending the thread from outside stands for a crash of its work.
    await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (failures.length === 0) return;
        clearInterval(check);
        resolve();
      }, 5);
    });
    expect(String(failures[0])).toContain('counting thread exited');
  });
});
