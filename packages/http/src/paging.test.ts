import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { HttpError } from './errors';
import { byId, decodeCursor, encodeCursor, readPage, rowsToFetch, sendPage, type ListKind } from './paging';

const THINGS = byId('things');
const PAIRS: ListKind<[string, number]> = { name: 'pairs', key: z.tuple([z.string(), z.number()]) };
const LIMITS = { defaultLimit: 2, maxLimit: 3 };
const ROWS = [{ id: 9 }, { id: 7 }, { id: 5 }, { id: 3 }, { id: 1 }];

/** A newest-first list of ROWS, paged always or on request. */
function app(paged: 'always' | 'on-request') {
  const server = express();
  server.get('/api/v1/teams/1/things', (req, res) => {
    const page = readPage(req, THINGS, LIMITS, paged);
    if (!page) return void res.json({ data: ROWS });
    const rows = ROWS.filter((row) => page.after === undefined || row.id < page.after).slice(0, rowsToFetch(page));
    sendPage(req, res, THINGS, page, rows, (row) => row.id);
  });
  server.use(((error, _req, res, _next) => {
    if (!(error instanceof HttpError)) throw error;
    res.status(error.status).json(error.body);
  }) as express.ErrorRequestHandler);
  return server;
}

const errorsOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return (error as HttpError).errors;
  }
  throw new Error('expected a refusal');
};

describe('cursors', () => {
  it('round-trip their key and are URL-safe', () => {
    const cursor = encodeCursor(PAIRS, ['2026-01-15T09:00:00.123456Z', 42]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(PAIRS, cursor)).toEqual(['2026-01-15T09:00:00.123456Z', 42]);
  });

  it.each([
    ['another list', encodeCursor(PAIRS, ['x', 1])],
    ['a key of the wrong shape', Buffer.from(JSON.stringify({ v: 1, l: 'things', k: 'one' })).toString('base64url')],
    ['a negative id', encodeCursor({ name: 'things', key: z.number() }, -4)],
    ['an unknown version', Buffer.from(JSON.stringify({ v: 2, l: 'things', k: 1 })).toString('base64url')],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['not base64url', 'a+b/c='],
    ['a non-canonical spelling', `${encodeCursor(THINGS, 5)}A`],
    ['an empty string', ''],
    ['an over-long string', 'A'.repeat(513)],
  ])('refuses %s with a 422 on cursor', (_what, cursor) => {
    expect(errorsOf(() => decodeCursor(THINGS, cursor))).toEqual({ cursor: [expect.stringContaining('The cursor is invalid')] });
  });
});

describe('lists paged always', () => {
  it('serves the default page with next_cursor and a relative Link to the next page, keeping other parameters', async () => {
    const first = await request(app('always')).get('/api/v1/teams/1/things?sort=x');
    expect(first.body.data).toEqual([{ id: 9 }, { id: 7 }]);
    expect(first.body.next_cursor).toBe(encodeCursor(THINGS, 7));
    expect(first.headers.link).toBe(`</api/v1/teams/1/things?sort=x&limit=2&cursor=${first.body.next_cursor}>; rel="next"`);
    const link = /<([^>]*)>/.exec(first.headers.link!)![1]!;
    const second = await request(app('always')).get(link);
    expect(second.body).toEqual({ data: [{ id: 5 }, { id: 3 }], next_cursor: encodeCursor(THINGS, 3) });
    const last = await request(app('always')).get(`/api/v1/teams/1/things?limit=3&cursor=${second.body.next_cursor}`);
    expect(last.body).toEqual({ data: [{ id: 1 }], next_cursor: null });
    expect(last.headers.link).toBeUndefined();
  });

  it('ends without a next page when the last page is exactly full', async () => {
    const response = await request(app('always')).get(`/api/v1/teams/1/things?limit=2&cursor=${encodeCursor(THINGS, 5)}`);
    expect(response.body).toEqual({ data: [{ id: 3 }, { id: 1 }], next_cursor: null });
  });

  it.each(['0', '4', '-1', '2.5', 'two', '', '00000000003'])('refuses limit=%j with 422', async (limit) => {
    const response = await request(app('always')).get(`/api/v1/teams/1/things?limit=${limit}`);
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ limit: ['The limit parameter must be an integer between 1 and 3.'] });
  });

  it('refuses a repeated parameter', async () => {
    const response = await request(app('always')).get('/api/v1/teams/1/things?limit=1&limit=2');
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ limit: ['The limit parameter must be given once.'] });
  });
});

describe('lists paged on request', () => {
  it('answer the whole set under data alone without limit or cursor', async () => {
    const response = await request(app('on-request')).get('/api/v1/teams/1/things');
    expect(response.body).toEqual({ data: ROWS });
    expect(response.headers.link).toBeUndefined();
  });

  it('page once limit or cursor is given', async () => {
    expect((await request(app('on-request')).get('/api/v1/teams/1/things?limit=1')).body).toEqual({ data: [{ id: 9 }], next_cursor: encodeCursor(THINGS, 9) });
    const fromCursor = await request(app('on-request')).get(`/api/v1/teams/1/things?cursor=${encodeCursor(THINGS, 9)}`);
    expect(fromCursor.body.data).toEqual([{ id: 7 }, { id: 5 }]);
  });
});

describe('the byte budget of a page', () => {
  it('stops before the row that would pass it, keeps at least one row, and the cursor goes on from the last row served', async () => {
    const big = [
      { id: 4, text: 'a'.repeat(40) },
      { id: 3, text: 'b'.repeat(40) },
      { id: 2, text: 'c'.repeat(200) },
      { id: 1, text: 'd' },
    ];
    const server = express();
    server.get('/list', (req, res) => {
      const page = readPage(req, THINGS, { defaultLimit: 4, maxLimit: 4, maxBytes: 120 }, 'always')!;
      const rows = big.filter((row) => page.after === undefined || row.id < page.after).slice(0, rowsToFetch(page));
      sendPage(req, res, THINGS, page, rows, (row) => row.id);
    });
    const first = await request(server).get('/list');
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.body.data.map((row: { id: number }) => row.id)).toEqual([4, 3]);
    expect(first.body.next_cursor).toBe(encodeCursor(THINGS, 3));
    const second = await request(server).get(`/list?cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((row: { id: number }) => row.id)).toEqual([2]);
    const third = await request(server).get(`/list?cursor=${second.body.next_cursor}`);
    expect(third.body).toEqual({ data: [{ id: 1, text: 'd' }], next_cursor: null });
  });
});
