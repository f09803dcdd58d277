import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi';

/**
 * The typed client of the public API. `paths`, `components` and `operations` are generated at
 * build time from the OpenAPI document of @worklane/api-contract (scripts/generate-types.mjs), and
 * openapi-fetch types every call by them: a path, a parameter or a body that is not in the
 * document does not compile, and neither does reading a field a response does not have.
 */
export type { components, operations, paths };
export type { Middleware } from 'openapi-fetch';

/** The document's schemas by component name: `Schemas['Webhook']`, `Schemas['Error']`... */
export type Schemas = components['schemas'];

/** The API's error body: `message`, a stable `code`, and per-field `errors` on a 422. */
export type ApiError = Schemas['Error'];

export type ApiClient = Client<paths>;

/** Where the API is mounted on the gateway (the document's `servers` entry). */
export const API_BASE_PATH = '/api/v1';

export interface ApiClientOptions {
  /** The gateway's URL (`https://worklane.example.com`); API_BASE_PATH is appended. */
  gatewayUrl: string;
  /** An API token (`wl_...`), sent as `Authorization: Bearer`. */
  token?: string;
  /** Replaces the global fetch, e.g. to route, sign or time out each request. */
  fetch?: ClientOptions['fetch'];
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  middleware?: Middleware[];
}

/** Adds `Authorization: Bearer <token>` to every request. */
export function bearerToken(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
}

/** A client of the API at `gatewayUrl`. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<paths>({
    baseUrl: `${options.gatewayUrl.replace(/\/+$/, '')}${API_BASE_PATH}`,
    headers: { accept: 'application/json', ...options.headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (options.token !== undefined) client.use(bearerToken(options.token));
  for (const middleware of options.middleware ?? []) client.use(middleware);
  return client;
}
