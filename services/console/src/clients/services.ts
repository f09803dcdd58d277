import type { Signer } from '@worklane/config';
import { matchApiRoute, signIdentity, type Identity } from '@worklane/http';
import { ServiceUnavailableError, type ServiceName } from '../errors';

export type HttpServiceName = Exclude<ServiceName, 'token'>;

/** The answer of a service: any 2xx, or a 4xx the page explains (404, 422...). */
export interface ServiceResponse<Body = unknown> {
  status: number;
  body: Body;
}

/** The API's error body (the README's error table). */
export interface ApiErrorBody {
  message?: string;
  errors?: Record<string, string[]>;
}

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
 * Calls the services' HTTP APIs the way the gateway does: the same paths and JSON bodies, with
 * the person's identity (tokenId 0: a console session, not an API token) in signed headers.
 */
export class ServiceApi {
  private readonly timeoutMs: number;

  constructor(private readonly options: ServiceApiOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async request<Body = unknown>(identity: Identity, method: string, path: string, body?: unknown): Promise<ServiceResponse<Body>> {
    const service = serviceForPath(path, method);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...signIdentity(this.options.identitySigner, method, path, identity),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(new URL(path, this.options.urls[service]), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ServiceUnavailableError(service, error);
    }
    const text = await response.text().catch((error: unknown) => {
      throw new ServiceUnavailableError(service, error);
    });
    // A 5xx is the service's failure, and an unsigned-identity 401 a misconfiguration of ours:
    // neither is something the person can act on.
    if (response.status >= 500 || response.status === 401) {
      throw new ServiceUnavailableError(service, new Error(`${method} ${path} answered ${response.status}`));
    }
    let parsed: unknown = undefined;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new ServiceUnavailableError(service, error);
      }
    }
    return { status: response.status, body: parsed as Body };
  }

  get<Body>(identity: Identity, path: string) {
    return this.request<Body>(identity, 'GET', path);
  }
}
