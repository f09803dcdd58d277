import { createApiClient, type ApiClient, type ApiError } from '@worklane/api-client';
import type { LoadedConfig } from './config';
import { CommandError } from './errors';

/** What a call of the typed client resolves to: the parsed body of a 2xx, or the error body. */
export interface ApiAnswer<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/**
 * The API as the API commands call it: at GATEWAY_URL, as WORKLANE_TOKEN, through the
 * client typed by the OpenAPI document (@worklane/api-client), so a command cannot call a path or
 * send a body the API does not have. Made on first use: the other commands need none of this.
 */
export class Api {
  private client?: ApiClient;

  constructor(private readonly config: LoadedConfig) {}

  private get gatewayUrl(): string {
    return this.config.require('GATEWAY_URL');
  }

  private get api(): ApiClient {
    if (!this.client) {
      const timeoutMs = this.config.values.API_TIMEOUT_MS;
      this.client = createApiClient({
        gatewayUrl: this.gatewayUrl,
        token: this.config.require('WORKLANE_TOKEN'),
        fetch: (request) => fetch(request, { signal: AbortSignal.timeout(timeoutMs) }),
      });
    }
    return this.client;
  }

  /** The body of the 2xx answer to `call`; anything else is a CommandError saying what happened. */
  async call<Data>(call: (api: ApiClient) => Promise<ApiAnswer<Data>>): Promise<Data> {
    const api = this.api;
    let answer: ApiAnswer<Data>;
    try {
      answer = await call(api);
    } catch (error) {
      throw this.describeFailure(error);
    }
    const { status } = answer.response;
    if (status >= 200 && status < 300) return answer.data as Data;
    throw new CommandError(this.describeRefusal(status, answer.error));
  }

  private describeFailure(error: unknown): Error {
    if (!(error instanceof Error)) return new Error(String(error));
    if (error.name === 'TimeoutError') return new CommandError(`the API at ${this.gatewayUrl} did not answer within ${this.config.values.API_TIMEOUT_MS} ms (API_TIMEOUT_MS)`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return new CommandError(`cannot reach the API at ${this.gatewayUrl} (${cause?.code ?? cause?.message ?? error.message}). Is the system running (\`npm start\`)?`);
  }

  private describeRefusal(status: number, body: unknown): string {
    const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ApiError>;
    const code = error.code ? ` ${error.code}` : '';
    if (status === 401) return `the API refused WORKLANE_TOKEN (401${code}): it is unknown or revoked`;
    if (status === 403) return `WORKLANE_TOKEN is not a token of this team (403${code})`;
    const fields = Object.entries(error.errors ?? {}).map(([field, messages]) => `${field}: ${messages.join(' ')}`);
    const detail = fields.length > 0 ? fields.join('; ') : (error.message ?? 'no message');
    return `the API refused the request (${status}${code}): ${detail}`;
  }
}
