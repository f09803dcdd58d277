/** Anything with a gateway URL (a System), or the base URL itself. */
export type ApiTarget = string | { gatewayUrl: string };

export interface ApiResponse<T = any> {
  status: number;
  /** Response headers, lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON, or null when the body is empty or not JSON. */
  body: T;
  /** The raw body. */
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined | null>;
  /** Send `body` as is (a string) instead of JSON-encoding it. */
  raw?: boolean;
}

export interface ApiClient {
  /** Base URL of the API: <gateway>/api/v1 */
  baseUrl: string;
  request<T = any>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  get<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<ApiResponse<T>>;
}

/** `<base>/api/v1` + path, unless path is already an absolute URL. */
export function apiUrl(base: string, path: string, query?: RequestOptions['query']): string {
  let url: string;
  if (/^https?:\/\//.test(path)) url = path;
  else url = `${base.replace(/\/+$/, '')}/api/v1${path.startsWith('/') ? '' : '/'}${path}`;
  if (query) {
    const u = new URL(url);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
    url = u.toString();
  }
  return url;
}

/**
 * A small fetch-based client of the public API through the gateway; paths are relative to
 * /api/v1. With a token, requests carry `Authorization: Bearer <token>`.
 */
export function api(target: ApiTarget, token?: string | null): ApiClient {
  const base = typeof target === 'string' ? target : target.gatewayUrl;
  async function request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = options.raw && typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, Object.fromEntries(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])));
    const res = await fetch(apiUrl(base, path, options.query), { method, headers, body: payload, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = null;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    const responseHeaders: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      responseHeaders[key] = value;
    });
    return { status: res.status, headers: responseHeaders, body: parsed as T, text };
  }
  return {
    baseUrl: apiUrl(base, '/').replace(/\/$/, ''),
    request,
    get: (path, options) => request('GET', path, undefined, options),
    delete: (path, options) => request('DELETE', path, undefined, options),
    post: (path, body, options) => request('POST', path, body, options),
    put: (path, body, options) => request('PUT', path, body, options),
    patch: (path, body, options) => request('PATCH', path, body, options),
  };
}
