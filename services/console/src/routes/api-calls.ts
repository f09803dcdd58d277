import type { Request } from 'express';
import type { ApiErrorBody, ServiceApi, ServiceResponse } from '../clients/services';
import { identityOf, pageNotFound } from '../context';

/** `/api/v1/teams/{team}` of the page's team. */
export const teamApi = (req: Request, rest: string) => `/api/v1/teams/${req.team!.team_id}${rest}`;

/** An answer the console did not expect from a service: a bug on one side, shown as a 500. */
export class UnexpectedResponseError extends Error {
  constructor(method: string, path: string, status: number) {
    super(`${method} ${path} answered ${status}`);
    this.name = 'UnexpectedResponseError';
  }
}

/**
 * Calls the API as the page's person. 404 (and 403, which only a mismatch between the page's
 * team and the identity could cause) become the console's not-found page; `accept` lists the
 * other statuses the caller handles itself.
 */
export async function callApi<Body>(
  services: ServiceApi,
  req: Request,
  method: string,
  path: string,
  options: { body?: unknown; accept?: number[] } = {},
): Promise<ServiceResponse<Body>> {
  const response = await services.request<Body>(identityOf(req), method, path, options.body);
  if (response.status >= 200 && response.status < 300) return response;
  if (options.accept?.includes(response.status)) return response;
  if (response.status === 404 || response.status === 403) throw pageNotFound();
  throw new UnexpectedResponseError(method, path, response.status);
}

/** Field messages of a 422, under the form's field names (`events.1` belongs to `events`). */
export function fieldErrors(body: ApiErrorBody | undefined): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const [key, messages] of Object.entries(body?.errors ?? {})) {
    const fieldName = key.split('.')[0]!;
    for (const message of Array.isArray(messages) ? messages : []) {
      if (!(errors[fieldName] ??= []).includes(message)) errors[fieldName].push(message);
    }
  }
  return errors;
}

/** Calls one page makes to the services at once. */
export const CONCURRENCY = 4;

/** Runs `task` over `items` with at most `limit` at a time, keeping the order of results. */
export async function mapLimit<Item, Result>(items: Item[], limit: number, task: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
