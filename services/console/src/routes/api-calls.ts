import type { Request } from 'express';
import type { ApiClient } from '@worklane/api-client';
import { requestOf, type ApiErrorBody, type ServiceApi } from '../clients/services';
import { identityOf, pageNotFound } from '../context';

/** The typed API client that calls the services as the page's person. */
export const apiOf = (services: ServiceApi, req: Request): ApiClient => services.as(identityOf(req));

/** `{ team }`: the path parameter of the page's team. */
export const teamOf = (req: Request) => ({ team: req.team!.team_id });

/** An answer the console did not expect from a service: a bug on one side, shown as a 500. */
export class UnexpectedResponseError extends Error {
  constructor(request: string, status: number) {
    super(`${request} answered ${status}`);
    this.name = 'UnexpectedResponseError';
  }
}

/** What a call of the typed client resolves to: the parsed body of a 2xx, or the error body. */
export interface ApiResult<Data, Error> {
  data?: Data;
  error?: Error;
  response: Response;
}

/**
 * Checks the answer of a call made as the page's person. 404 (and 403, which only a mismatch
 * between the page's team and the identity could cause) become the console's not-found page;
 * `accept` lists the other statuses the caller handles itself.
 */
export async function callApi<Result extends ApiResult<unknown, unknown>>(call: Promise<Result>, accept: readonly number[] = []): Promise<Result> {
  const result = await call;
  const { status } = result.response;
  if (status >= 200 && status < 300) return result;
  if (accept.includes(status)) return result;
  if (status === 404 || status === 403) throw pageNotFound();
  throw new UnexpectedResponseError(requestOf(result.response), status);
}

/** The body of a 2xx answer to a call made as the page's person (see callApi). */
export async function apiData<Data>(call: Promise<ApiResult<Data, unknown>>): Promise<Data> {
  const result = await callApi(call);
  return result.data as Data;
}

/** The error body of an answer the caller accepted, if it has one. */
export const errorBody = (result: ApiResult<unknown, unknown>): ApiErrorBody | undefined =>
  typeof result.error === 'object' && result.error !== null ? (result.error as ApiErrorBody) : undefined;

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
