import { connect } from '@nats-io/transport-node';
import { createLogger } from '@worklane/observability';
import { startNatsServer, type NatsServer } from '@worklane/testing';
import { connectNats, parseNatsServers } from './connection';

describe('parseNatsServers', () => {
  it('keeps servers without credentials as they are, with a scheme', () => {
    expect(parseNatsServers('nats://a:4222, b:4223,tls://c.example:4222')).toEqual({
      servers: ['nats://a:4222', 'nats://b:4223', 'tls://c.example:4222'],
    });
  });

  it('takes a user and password out of the URLs (percent-encoded characters decoded)', () => {
    expect(parseNatsServers('nats://worklane:p%40ss%3Aword@nats-0:4222,nats://worklane:p%40ss%3Aword@nats-1:4222')).toEqual({
      servers: ['nats://nats-0:4222', 'nats://nats-1:4222'],
      user: 'worklane',
      pass: 'p@ss:word',
    });
  });

  it('reads a user name without a password as a token, and applies credentials given once to every server', () => {
    expect(parseNatsServers('nats://s3cret@nats-0:4222,nats://nats-1:4222')).toEqual({ servers: ['nats://nats-0:4222', 'nats://nats-1:4222'], token: 's3cret' });
  });

  it('refuses different credentials and malformed servers without repeating the value', () => {
    const attempts = ['nats://a:one@x:4222,nats://a:two@y:4222', 'nats://a:one@[::1:4222', ' , ', 'nats://:4222', 'nats://a:one%zz@x:4222'];
    for (const value of attempts) {
      let message = '';
      try {
        parseNatsServers(value);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^NATS_URL/);
      expect(message).not.toContain('one');
    }
  });
});

describe('connectNats against a server that requires a password', () => {
  const password = 'p@ss:w/rd';
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer({ jetstream: false, args: ['--user', 'worklane', '--pass', password] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('connects with the credentials of NATS_URL', async () => {
    const url = `nats://worklane:${encodeURIComponent(password)}@127.0.0.1:${server.port}`;
    const connection = await connectNats(url, 'connection-test', createLogger('test', 'silent'));
    try {
      const subscription = connection.subscribe('ping', { max: 1 });
      connection.publish('ping', 'pong');
      for await (const message of subscription) expect(message.string()).toBe('pong');
    } finally {
      await connection.close();
    }
  });

  it('is refused without them (so the test above proves the credentials were sent)', async () => {
    await expect(connect({ servers: `127.0.0.1:${server.port}`, maxReconnectAttempts: 0, reconnect: false })).rejects.toThrow(/authorization/i);
  });
});
