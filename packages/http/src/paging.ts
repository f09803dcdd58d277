import type { Request, Response } from 'express';
import { z } from 'zod';
import { validationFailed } from './errors';

/**
 * Keyset paging of the API's lists.
 *
 * A client asks for `?limit=N` rows and follows `?cursor=...`. The cursor is opaque to clients:
 * base64url of a small JSON document naming the list and the sort key of the last row served.
 * Queries continue strictly after that key in the list's stable order (never OFFSET), so a page
 * costs the same however deep it is and rows added meanwhile neither repeat nor shift the pages.
 * The next cursor is in the body (`next_cursor`, null on the last page) and in an RFC 8288
 * `Link: <...>; rel="next"` header.
 */

/** How many rows a page holds when the client does not say, and at most. */
export interface PageLimits {
  defaultLimit: number;
  maxLimit: number;
  /**
   * Largest JSON of a page's rows in bytes (LIST_MAX_PAGE_BYTES): a page of large rows stops
   * early, never below one row, and its next cursor goes on after its last row. Unbounded when unset.
   */
  maxBytes?: number | undefined;
}

/** A list's name (so a cursor of one list is refused by another) and the shape of its sort key. */
export interface ListKind<Key> {
  name: string;
  key: z.ZodType<Key>;
}

/** Lists ordered by a positive integer id: the key is that id. */
export const byId = (name: string): ListKind<number> => ({ name, key: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

/** What a handler reads: how many rows to serve and after which key. */
export interface PageRequest<Key> {
  limit: number;
  after: Key | undefined;
  /** See PageLimits.maxBytes. */
  maxBytes?: number | undefined;
}

/** Longest cursor accepted; the ones Worklane writes are far shorter. */
const MAX_CURSOR_LENGTH = 512;
const CURSOR_VERSION = 1;

const invalidCursor = () => validationFailed({ cursor: ['The cursor is invalid or belongs to another list; start again without it.'] });

const cursorDocument = z.object({ v: z.literal(CURSOR_VERSION), l: z.string(), k: z.unknown() });

export function encodeCursor<Key>(kind: ListKind<Key>, key: Key): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, l: kind.name, k: key })).toString('base64url');
}

/** The key a cursor carries; 422 naming `cursor` for anything this list did not write. */
export function decodeCursor<Key>(kind: ListKind<Key>, text: string): Key {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalidCursor();
  const bytes = Buffer.from(text, 'base64url');
  // Only the canonical spelling: stray trailing characters, which the decoder would drop, are tampering too.
  if (bytes.toString('base64url') !== text) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const document = cursorDocument.safeParse(parsed);
  if (!document.success || document.data.l !== kind.name) throw invalidCursor();
  const key = kind.key.safeParse(document.data.k);
  if (!key.success) throw invalidCursor();
  return key.data;
}

/** One value of a query parameter; a repeated parameter is refused rather than guessed at. */
function single(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw validationFailed({ [name]: [`The ${name} parameter must be given once.`] });
  return value;
}

function readLimit(text: string | undefined, limits: PageLimits): number {
  if (text === undefined) return limits.defaultLimit;
  const value = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 1 && value <= limits.maxLimit)) {
    throw validationFailed({ limit: [`The limit parameter must be an integer between 1 and ${limits.maxLimit}.`] });
  }
  return value;
}

/**
 * The page a list request asks for. Extension lists page always (`paged: 'always'`): no `limit`
 * means the default. The whole-set lists (`paged: 'on-request'`) answer undefined, meaning "all
 * rows", unless `limit` or `cursor` is given.
 */
export function readPage<Key>(req: Request, kind: ListKind<Key>, limits: PageLimits, paged: 'always' | 'on-request'): PageRequest<Key> | undefined {
  const limitText = single(req, 'limit');
  const cursorText = single(req, 'cursor');
  if (paged === 'on-request' && limitText === undefined && cursorText === undefined) return undefined;
  const limit = readLimit(limitText, limits);
  return { limit, after: cursorText === undefined ? undefined : decodeCursor(kind, cursorText), maxBytes: limits.maxBytes };
}

/** Rows to fetch for a page: one more than it holds, to know whether another page follows. */
export const rowsToFetch = (page: PageRequest<unknown>) => page.limit + 1;

/**
 * The next page's address as the client called this one: the request's own path (the gateway
 * forwards API paths unchanged, so it is the public one) with its query, `cursor` replaced. A
 * relative reference, so that no Host or X-Forwarded-* header a client sends can redirect it.
 */
export function nextPageLink(req: Request, cursor: string, limit: number): string {
  const [path, query = ''] = req.originalUrl.split('?', 2) as [string, string | undefined];
  const params = new URLSearchParams(query);
  params.set('limit', String(limit));
  params.set('cursor', cursor);
  return `${path}?${params.toString()}`;
}

/**
 * Answers a page: `{"data": [...], "next_cursor": ...}` and, when another page follows, the
 * `Link` header to it. `rows` are what the query returned for `rowsToFetch(page)`; `keyOf` gives a
 * row's sort key. Rows are serialised one by one and the page stops before the one that would
 * take it past `page.maxBytes` (the first row always goes), so large rows cannot make one answer
 * huge: the client follows next_cursor as for any page.
 */
export function sendPage<Row, Key>(req: Request, res: Response, kind: ListKind<Key>, page: PageRequest<Key>, rows: Row[], keyOf: (row: Row) => Key): void {
  const budget = page.maxBytes ?? Number.POSITIVE_INFINITY;
  const parts: string[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, page.limit)) {
    const json = JSON.stringify(row);
    const size = Buffer.byteLength(json) + 1;
    if (parts.length > 0 && bytes + size > budget) break;
    parts.push(json);
    bytes += size;
  }
  const next = rows.length > parts.length ? encodeCursor(kind, keyOf(rows[parts.length - 1]!)) : null;
  if (next !== null) res.append('Link', `<${nextPageLink(req, next, page.limit)}>; rel="next"`);
  res.type('application/json').send(`{"data":[${parts.join(',')}],"next_cursor":${JSON.stringify(next)}}`);
}

/** Rows read per query while a whole-set list streams. */
export const WHOLE_LIST_BATCH = 100;

/**
 * Answers a whole-set list (`{"data": [...]}`, no paging asked for) without holding it in memory:
 * rows are read a batch at a time, each batch after the last key of the one before, and written
 * as they come, waiting whenever the client is slower than the database. A batch is at most
 * `batchSize` rows and, with `maxBytes`, only the rows that may fit in that many bytes and the
 * one after them (the byte-bounded read of @worklane/db's boundedPageQuery), so large rows
 * cannot make one batch large. `readBatch` answers undefined when the parent is not found, which
 * is reported (false) before anything is sent. A failure after the first batch cuts the
 * connection (see the error handler), never a short list that looks complete.
 */
export async function streamWholeList<Row, Key>(
  res: Response,
  readBatch: (after: Key | undefined, take: number, maxBytes: number | undefined) => Promise<Row[] | undefined>,
  keyOf: (row: Row) => Key,
  { batchSize = WHOLE_LIST_BATCH, maxBytes }: { batchSize?: number; maxBytes?: number | undefined } = {},
): Promise<boolean> {
  let rows = await readBatch(undefined, batchSize, maxBytes);
  if (rows === undefined) return false;
  res.status(200).type('application/json');
  let separator = '';
  let body = '{"data":[';
  for (;;) {
    // JSON bytes of the batch's rows before its last: never fewer than the bytes the read counts.
    let bytesBeforeLast = 0;
    for (const [index, row] of rows.entries()) {
      const json = JSON.stringify(row);
      body += separator + json;
      separator = ',';
      if (maxBytes !== undefined && index < rows.length - 1) bytesBeforeLast += Buffer.byteLength(json);
    }
    // A batch that reached neither its rows nor its bytes is the last: the read would have taken
    // one more row had there been one.
    const moreMayFollow = rows.length === batchSize || (maxBytes !== undefined && bytesBeforeLast >= maxBytes);
    if (!moreMayFollow) break;
    if (!res.write(body) && !(await drained(res))) return true;
    body = '';
    rows = (await readBatch(keyOf(rows[rows.length - 1]!), batchSize, maxBytes)) ?? [];
  }
  res.end(`${body}]}`);
  return true;
}

/** Resolves true when the response can take more, false when the client went away. */
function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
