/**
 * "A dependency I need is unavailable": a failure that says nothing about the request and
 * everything about a database, a message bus or another service that cannot answer right now.
 * Recognised in one place so that every service answers it the same way: HTTP 503 with
 * Retry-After (`serviceUnavailable` of @worklane/http), gRPC UNAVAILABLE (`createGrpcServer` of
 * @worklane/grpc). docs/operations.md states the rule.
 */

/** Thrown by code that knows a dependency did not answer; `dependency` names it for the logs. */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: string,
    cause?: unknown,
  ) {
    super(`${dependency} is unavailable`, { cause });
    this.name = 'DependencyUnavailableError';
  }
}

/** Socket errors: nothing listens, the peer went away, no route, no name, no answer in time. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve: class 08 (connection exception), class 53
 * (insufficient resources: too many connections, out of memory, disk full), 57P01-57P03 (shut
 * down by an administrator, after a crash, or not yet accepting connections) and 57014 (a
 * statement cancelled, as a statement timeout does).
 */
const isUnavailableSqlState = (code: string) => /^(08|53)[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '57014';

/** What node-postgres says, without a code, when it cannot get or keep a connection. */
const POSTGRES_CONNECTION_MESSAGES =
  /^(timeout exceeded when trying to connect|connection terminated|client has encountered a connection error|query read timeout|cannot use a pool after calling end)/i;

/** gRPC statuses of a call that got no answer: UNAVAILABLE (14), DEADLINE_EXCEEDED (4). */
const GRPC_UNAVAILABLE = new Set([14, 4]);

/** Error names of a NATS connection that is down or of a request nobody answered in time. */
const NATS_NAMES = new Set(['ConnectionError', 'ClosedConnectionError', 'DrainingConnectionError', 'NoResponders', 'TimeoutError']);

/** How deep `cause` and AggregateError chains are followed. */
const MAX_DEPTH = 4;

interface ErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  details?: unknown;
  metadata?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function recognise(error: ErrorShape): boolean {
  if (error instanceof DependencyUnavailableError) return true;
  const { code, name, message } = error;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  // A grpc-js ServiceError: a numeric status with details and metadata.
  if (typeof code === 'number' && 'details' in error && 'metadata' in error && GRPC_UNAVAILABLE.has(code)) return true;
  if (typeof name === 'string' && NATS_NAMES.has(name)) return true;
  return typeof message === 'string' && POSTGRES_CONNECTION_MESSAGES.test(message);
}

/**
 * Whether `error` (or what caused it) means a dependency could not answer: a PostgreSQL server
 * that refuses, drops or never grants a connection, a gRPC call that got UNAVAILABLE or ran past
 * its deadline, a NATS connection that is down, a socket that could not reach its peer, or a
 * DependencyUnavailableError.
 */
export function isDependencyUnavailable(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > MAX_DEPTH) return false;
  const shape = error as ErrorShape;
  if (recognise(shape)) return true;
  if (Array.isArray(shape.errors) && shape.errors.some((inner) => isDependencyUnavailable(inner, depth + 1))) return true;
  return isDependencyUnavailable(shape.cause, depth + 1);
}
