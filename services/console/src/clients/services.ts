import { createApiClient, type ApiClient, type ApiError } from '@worklane/api-client';
import type { Signer } from '@worklane/config';
import { matchApiRoute, signIdentity, type Identity } from '@worklane/http';
import { ServiceUnavailableError, type ServiceName } from '../errors';

export type HttpServiceName = Exclude<ServiceName, 'token'>;

/** The API's error body (the README's error table), as the document describes it. */
export type ApiErrorBody = Partial<ApiError>;

/**
 * Which service answers an API path: the gateway's own route table, so the console and the API
 * reach the same handlers with the same rules.
 */
export function serviceForPath(path: string, method = 'GET'): HttpServiceName {
  const pathname = path.split('?')[0]!;
  const match = matchApiRoute(method, pathname);
  if (match.kind === 'not-found') throw new Error(`no service serves ${pathname}`);
  return match.route.upstream;
}

export interface ServiceApiOptions {
  urls: Record<HttpServiceName, string>;
  /** The console's own key: it signs the session's identity for the services. */
  identitySigner: Signer;
  timeoutMs?: number;
}

/**
 * The origin the typed client builds its URLs on. It never leaves the process (`.invalid` never
 * resolves): each request is sent to the service that serves its path.
 */
const SERVICES_ORIGIN = 'http://services.invalid';

/** Statuses whose answer has no body, which a Response must be made without. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The method and path of the request each answer is for, for messages about unexpected answers. */
const requests = new WeakMap<Response, string>();

/** `GET /api/v1/teams/1/webhooks` for an answer of a ServiceApi client. */
export function requestOf(response: Response): string {
  return requests.get(response) ?? `${response.status} answer`;
}

/**
 * Calls the services' HTTP APIs the way the gateway does: the same paths and JSON bodies, with
 * the person's identity (tokenId 0: a console session, not an API token) in signed headers.
 * Calls are made through the typed API client (@worklane/api-client), so a path, parameter or body
 * that is not in the API's OpenAPI document does not compile.
 */
export class ServiceApi {
  private readonly timeoutMs: number;

  constructor(private readonly options: ServiceApiOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** A client of the API that calls the services as `identity`. */
  as(identity: Identity): ApiClient {
    return createApiClient({ gatewayUrl: SERVICES_ORIGIN, fetch: (request) => this.send(identity, request) });
  }

  /**
   * Sends one request of the typed client to the service that serves its path, with the identity
   * signed. A service that cannot be reached, times out, fails (5xx), refuses the console's
   * signature (401, a misconfiguration of ours) or answers something that is not JSON is a
   * ServiceUnavailableError: nothing the person can act on. Any other answer is given back whole.
   */
  private async send(identity: Identity, request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = `${url.pathname}${url.search}`;
    const method = request.method;
    const service = serviceForPath(path, method);
    const headers = new Headers(request.headers);
    for (const [name, value] of Object.entries(signIdentity(this.options.identitySigner, method, path, identity))) headers.set(name, value);
    const body = request.body === null ? undefined : await request.text();

    let response: Response;
    let text: string;
    try {
      response = await fetch(new URL(path, this.options.urls[service]), {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new ServiceUnavailableError(service, error);
    }
    if (response.status >= 500 || response.status === 401) {
      throw new ServiceUnavailableError(service, new Error(`${method} ${path} answered ${response.status}`));
    }
    if (text.length > 0) {
      try {
        JSON.parse(text);
      } catch (error) {
        throw new ServiceUnavailableError(service, error);
      }
    }
    // The body has been read: give the client a copy of the answer that says how long it is, so an
    // empty body is no body rather than invalid JSON.
    const answer = new Response(text.length > 0 && !NULL_BODY_STATUSES.has(response.status) ? text : null, {
      status: response.status,
      statusText: response.statusText,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
    });
    requests.set(answer, `${method} ${path}`);
    return answer;
  }
}
