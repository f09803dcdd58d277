import pino from 'pino';
import { Lifecycle } from './lifecycle';

const silent = pino({ level: 'silent' });

describe('Lifecycle', () => {
  it('reports not ready and runs steps in order', async () => {
    const lifecycle = new Lifecycle(silent, 1000);
    const order: string[] = [];
    lifecycle.onShutdown('stop', () => void order.push(`stop:${lifecycle.ready}`)).onShutdown('close', async () => void order.push('close'));
    expect(lifecycle.ready).toBe(true);
    await expect(lifecycle.shutdown()).resolves.toBe(0);
    expect(order).toEqual(['stop:false', 'close']);
  });

  it('keeps going after a failed step and exits non-zero', async () => {
    const lifecycle = new Lifecycle(silent, 1000);
    const ran: string[] = [];
    lifecycle
      .onShutdown('broken', () => {
        throw new Error('boom');
      })
      .onShutdown('after', () => void ran.push('after'));
    await expect(lifecycle.shutdown()).resolves.toBe(1);
    expect(ran).toEqual(['after']);
  });

  it('gives up at the deadline', async () => {
    const lifecycle = new Lifecycle(silent, 50);
    lifecycle.onShutdown('hangs', () => new Promise(() => {}));
    await expect(lifecycle.shutdown()).resolves.toBe(1);
  });
});
