import type { Request, RequestHandler, Response } from 'express';
import { IDEMPOTENT_REPLAYED_HEADER } from '@worklane/api-contract';
import type { Logger } from '@worklane/observability';
import { matchApiRoute } from '../api-routes';
import { HttpError } from '../errors';
import { idempotencyKeyOf, requestFingerprint } from './request';
import type { IdempotencyKeys, IdempotencyScope, SqlClient, StoredResponse } from './store';

/**
 * Encrypts the kept answers of a service whose POSTs may answer a secret (the webhook service's
 * secret rotation): the body is stored sealed, for the team whose key it is, and opened to replay.
 */
export interface AnswerSeal {
  seal(body: string, teamId: number): string;
  open(sealed: string, teamId: number): string;
}

export interface IdempotencyOptions {
  keys: IdempotencyKeys;
  /** Largest answer kept for replay, in bytes; a larger one is sent but not kept, and the key is released. */
  maxResponseBytes: number;
  logger: Logger;
  /** Kept answers are stored encrypted with it; in clear when not given. */
  seal?: AnswerSeal;
}

/** A key this request holds while it runs. */
interface HeldKey {
  options: IdempotencyOptions;
  scope: IdempotencyScope;
  leaseToken: string;
  /** The answer was recorded in the transaction of the work. */
  recorded: boolean;
}

const heldKeys = new WeakMap<Request, HeldKey>();

/** Headers of an answer that are kept and replayed with it (the content type always is JSON). */
const KEPT_HEADERS = ['location'];

/**
 * Answers that are kept for the key: the request was carried out (2xx), or refused for the state
 * of the data it names (404, 409). A request refused for its own input or authority (400, 401,
 * 403, 413, 415, 422, 429), or that failed (5xx), releases the key: corrected, it may use it again.
 */
const isKept = (status: number) => (status >= 200 && status < 300) || status === 404 || status === 409;

const keyInUse = () =>
  new HttpError(409, 'A request with this Idempotency-Key is still being processed; retry after it has finished.', undefined, { 'Retry-After': '1' }, 'idempotency_key_in_use');

const keyReused = (samePath: boolean) =>
  new HttpError(
    422,
    samePath
      ? 'This Idempotency-Key was already used with a different request body; use a new key for a new request.'
      : 'This Idempotency-Key was already used for a request to another path; use a new key for a new request.',
    undefined,
    {},
    'idempotency_key_reused',
  );

function storedResponse(res: Response, status: number, body: unknown): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.getHeader(name);
    if (typeof value === 'string') headers[name] = value;
  }
  return { status, headers, body: JSON.stringify(body) ?? '' };
}

/** The answer as it is stored: sealed when the service seals its answers. The size bound applies to the answer as sent. */
const kept = (held: HeldKey, response: StoredResponse): StoredResponse =>
  held.options.seal ? { ...response, body: held.options.seal.seal(response.body, held.scope.teamId) } : response;

function replay(res: Response, options: IdempotencyOptions, scope: IdempotencyScope, response: StoredResponse): void {
  const body = options.seal ? options.seal.open(response.body, scope.teamId) : response.body;
  // A kept answer may hold a secret (a rotation's): never cached on the way.
  if (options.seal) res.set('Cache-Control', 'no-store');
  res.status(response.status).set(response.headers).set(IDEMPOTENT_REPLAYED_HEADER, 'true').type('application/json').send(body);
}

/**
 * Settles the key when the answer goes out: keeps it (when it was not recorded with the work
 * already) or releases it. The answer waits for that, so that a retry arriving right after it
 * finds the key settled rather than still in progress.
 */
function settleOnAnswer(res: Response, held: HeldKey): void {
  const { keys, maxResponseBytes, logger } = held.options;
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    res.json = json;
    const status = res.statusCode;
    // Recorded with the work: nothing left to do. (A failure after a recorded write finds the
    // key completed: releasing it is then a no-op, and a retry gets the recorded answer.)
    if (held.recorded && isKept(status)) return json(body);
    const response = isKept(status) ? storedResponse(res, status, body) : undefined;
    const tooLarge = response !== undefined && Buffer.byteLength(response.body) > maxResponseBytes;
    if (tooLarge) logger.warn({ status, maxResponseBytes }, 'answer too large to keep for its Idempotency-Key; the key is released');
    const settled = response && !tooLarge ? keys.complete(held.scope, held.leaseToken, kept(held, response)) : keys.release(held.scope, held.leaseToken);
    void settled.catch((error: unknown) => logger.warn({ err: error }, 'could not settle an Idempotency-Key; it is freed when its lease runs out')).finally(() => json(body));
    return res;
  };
}

/**
 * `Idempotency-Key` on the service's POSTs (docs/api-idempotency.md). A POST with a key first takes
 * the key, scoped to the caller's team and the operation: a retry with the same key and request is
 * answered with the first answer (`Idempotent-Replayed: true`) without running again; the same key
 * with another path or body is 422 `idempotency_key_reused`; while the first still runs, 409
 * `idempotency_key_in_use`. Mounted after the identity check, before the routes.
 */
export function idempotentPosts(options: IdempotencyOptions): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST') return next();
    const key = idempotencyKeyOf(req.headers);
    if (key === undefined || !req.identity) return next();
    const path = req.originalUrl.split('?', 1)[0]!;
    const match = matchApiRoute(req.method, path);
    // Not an operation of the API: the routes answer 404 or 405.
    if (match.kind !== 'matched') return next();

    const scope: IdempotencyScope = { teamId: req.identity.teamId, operation: `POST ${match.route.template}`, key };
    const reservation = await options.keys.reserve(scope, { fingerprint: requestFingerprint(req.method, path, req.body), path });
    switch (reservation.outcome) {
      case 'replay':
        return replay(res, options, scope, reservation.response);
      case 'in-progress':
        throw keyInUse();
      case 'mismatch':
        throw keyReused(reservation.samePath);
      case 'reserved': {
        const held: HeldKey = { options, scope, leaseToken: reservation.leaseToken, recorded: false };
        heldKeys.set(req, held);
        settleOnAnswer(res, held);
        return next();
      }
    }
  };
}

/** How a create answers, recorded for its Idempotency-Key together with the write. */
export interface CreatedAnswer<T> {
  /**
   * With a key: records the answer to `written` as the key's, on the write's transaction, so that
   * the resource and the record of its answer commit together or not at all (409 when the key's
   * lease was lost to a retry meanwhile, rolling the write back). Undefined without a key.
   */
  recordIn: ((client: SqlClient, written: T) => Promise<void>) | undefined;
  /** Sends the answer: 201, the resource as JSON, and its `Location` when the route names one. */
  send(written: T): void;
}

/**
 * The 201 answer of a create (202 for a job that goes on after the answer). Pass `recordIn` to the
 * data function that writes the resource (it runs it in its transaction), then `send` what it wrote.
 */
export function createdAnswer<T>(req: Request, res: Response, location?: (written: T) => string, status: 201 | 202 = 201): CreatedAnswer<T> {
  const held = heldKeys.get(req);
  return {
    recordIn: held
      ? async (client, written) => {
          const response: StoredResponse = { status, headers: location ? { location: location(written) } : {}, body: JSON.stringify(written) };
          // Too large to keep: settled (released) when the answer goes out.
          if (Buffer.byteLength(response.body) > held.options.maxResponseBytes) return;
          if (!(await held.options.keys.complete(held.scope, held.leaseToken, kept(held, response), client))) throw keyInUse();
          held.recorded = true;
        }
      : undefined,
    send: (written) => {
      res.status(status);
      if (location) res.location(location(written));
      res.json(written);
    },
  };
}
