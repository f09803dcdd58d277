import { request, type Dispatcher } from 'undici';
import { parseRetryAfter } from './retry-schedule';

/** Bytes of a receiver's answer kept with an attempt. */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface WebhookRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** A dispatcher pinned to the address that was checked (PinnedDispatchers.forAddress). */
  dispatcher: Dispatcher;
  /** The whole exchange, from connecting to the end of the response excerpt. */
  timeoutMs: number;
  /** Time allowed for the response headers once the request is sent; defaults to timeoutMs. */
  headersTimeoutMs?: number;
  /** Bytes of the response body kept; RESPONSE_EXCERPT_BYTES when not given. */
  excerptBytes?: number;
}

/** What one attempt produced: a status code, or an error when there was no answer. */
export interface WebhookResponse {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The first 4 KiB of the response body as text, null when there was no answer. */
  responseExcerpt: string | null;
  /** `Retry-After` in seconds, when the receiver sent one. */
  retryAfterSeconds?: number | undefined;
  /** The headers the request was sent with, when it was sent (set by the caller that made them). */
  requestHeaders?: Record<string, string>;
  /** The response headers as received (lower-case names), when there was an answer. */
  responseHeaders?: Record<string, string | string[] | undefined>;
}

/** 2xx is success; anything else, redirects included, is not. */
/** PostgreSQL text cannot hold NUL, and a receiver may answer with anything. */
const storableText = (bytes: Buffer) => bytes.toString('utf8').replace(/\u0000/g, '\uFFFD');

async function readExcerpt(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    // Leaving the loop discards the rest: a receiver cannot make us download a large answer.
    if (size >= limit) break;
  }
  return storableText(Buffer.concat(chunks).subarray(0, limit));
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_MISMATCH)/;

/** A short, safe description of why there was no answer; never a stack trace. */
export function describeRequestError(error: unknown, timeoutMs: number, headersTimeoutMs?: number): string {
  const failure = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  const code = failure?.code ?? failure?.cause?.code;
  if (failure?.name === 'TimeoutError' || failure?.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return code === 'UND_ERR_HEADERS_TIMEOUT' && headersTimeoutMs !== undefined && headersTimeoutMs < timeoutMs
      ? `timeout: no response headers within ${headersTimeoutMs / 1000} s`
      : `timeout: no complete response within ${timeoutMs / 1000} s`;
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect timeout';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection reset by the receiver';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'receiver unreachable';
  if (code && TLS_CODES.test(code)) return `TLS handshake failed (${code})`;
  if (code === 'UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE') return 'response too large';
  return code ? `network error (${code})` : 'network error';
}

/**
 * POSTs `body` once. Redirects are never followed (a 3xx is simply the answer), the response body
 * is read only up to the excerpt, and nothing here throws: every outcome is a WebhookResponse.
 */
export async function sendWebhookRequest(input: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const signal = AbortSignal.timeout(input.timeoutMs);
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await request(input.url, {
      method: 'POST',
      dispatcher: input.dispatcher,
      headers: input.headers,
      body: input.body,
      signal,
      headersTimeout: Math.min(input.headersTimeoutMs ?? input.timeoutMs, input.timeoutMs),
      bodyTimeout: input.timeoutMs,
    });
    let excerpt: string;
    try {
      excerpt = await readExcerpt(response.body, input.excerptBytes ?? RESPONSE_EXCERPT_BYTES);
    } catch (error) {
      return {
        statusCode: response.statusCode,
        error: describeRequestError(error, input.timeoutMs),
        durationMs: elapsed(),
        responseExcerpt: null,
        responseHeaders: response.headers,
      };
    }
    return {
      statusCode: response.statusCode,
      error: null,
      durationMs: elapsed(),
      responseExcerpt: excerpt,
      retryAfterSeconds: parseRetryAfter(response.headers['retry-after']),
      responseHeaders: response.headers,
    };
  } catch (error) {
    return { statusCode: null, error: describeRequestError(error, input.timeoutMs, input.headersTimeoutMs), durationMs: elapsed(), responseExcerpt: null };
  }
}
