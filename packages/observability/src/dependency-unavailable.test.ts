import net from 'node:net';
import { DependencyUnavailableError, isDependencyUnavailable } from './dependency-unavailable';

/** The error a real connection to a port nobody listens on fails with. */
async function refusedConnection(): Promise<Error> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return new Promise((resolve) => net.connect(port, '127.0.0.1').once('error', resolve));
}

const grpcError = (code: number) => Object.assign(new Error(`${code} status`), { code, details: 'no answer', metadata: {} });
const postgresError = (code: string) => Object.assign(new Error('database error'), { code, severity: 'FATAL' });

describe('isDependencyUnavailable', () => {
  it('recognises a connection nobody accepts, also as the cause of another error', async () => {
    const refused = await refusedConnection();
    expect(isDependencyUnavailable(refused)).toBe(true);
    expect(isDependencyUnavailable(new Error('lookup failed', { cause: refused }))).toBe(true);
    expect(isDependencyUnavailable(new AggregateError([refused], 'every address failed'))).toBe(true);
  });

  it('recognises PostgreSQL refusing, dropping or never granting a connection', () => {
    for (const code of ['08006', '08001', '53300', '57P01', '57P03', '57014']) expect(isDependencyUnavailable(postgresError(code))).toBe(true);
    for (const message of ['timeout exceeded when trying to connect', 'Connection terminated unexpectedly', 'Connection terminated due to connection timeout']) {
      expect(isDependencyUnavailable(new Error(message))).toBe(true);
    }
  });

  it('recognises gRPC calls that got no answer, not those that got one', () => {
    expect(isDependencyUnavailable(grpcError(14))).toBe(true); // UNAVAILABLE
    expect(isDependencyUnavailable(grpcError(4))).toBe(true); // DEADLINE_EXCEEDED
    for (const answered of [5, 3, 8, 13, 16]) expect(isDependencyUnavailable(grpcError(answered))).toBe(false);
  });

  it('recognises a NATS connection that is down and a DependencyUnavailableError', () => {
    const closed = Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' });
    expect(isDependencyUnavailable(closed)).toBe(true);
    expect(isDependencyUnavailable(new DependencyUnavailableError('webhook service', new Error('boom')))).toBe(true);
  });

  it('leaves everything else to be a server error', () => {
    for (const other of [new Error('boom'), new TypeError('x is undefined'), postgresError('23505'), postgresError('42P01'), 'ECONNREFUSED', null, undefined, { code: 14 }]) {
      expect(isDependencyUnavailable(other)).toBe(false);
    }
  });

  it('does not follow a cause chain without end', () => {
    const looped: { cause?: unknown } = new Error('looped');
    looped.cause = looped;
    expect(isDependencyUnavailable(looped)).toBe(false);
  });
});
