import type { Request, RequestHandler, Router } from 'express';
import { HttpError, notFound } from './errors';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type ResourceHandlers = Partial<Record<Method, RequestHandler>>;

/**
 * Registers the handlers of one path; any other method gets 405 with an `Allow` header, so a
 * known path never answers 404 for the wrong verb.
 */
export function resource(router: Router, path: string, handlers: ResourceHandlers): void {
  const route = router.route(path);
  const allowed = Object.keys(handlers).map((method) => method.toUpperCase());
  if (allowed.includes('GET')) allowed.push('HEAD');
  for (const [method, handler] of Object.entries(handlers) as [Method, RequestHandler][]) route[method](handler);
  route.all(() => {
    throw new HttpError(405, 'Method not allowed.', undefined, { Allow: allowed.join(', ') });
  });
}

const MAX_ID = 9_007_199_254_740_991;

/** A positive integer path parameter; anything else is 404, as for an id that does not exist. */
export function idParam(req: Request, name: string): number {
  const value = req.params[name];
  if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value) || Number(value) > MAX_ID) throw notFound();
  return Number(value);
}
