import type { IncomingMessage } from 'node:http';
import { HttpError, badRequest, requireStorableText } from '@worklane/http';

/** Bodies up to 1 MiB by default (REQUEST_BODY_MAX_BYTES). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

const unsupportedType = () => new HttpError(415, 'The request body must be JSON (Content-Type: application/json).');
const unsupportedEncoding = () => new HttpError(415, 'The request body encoding is not supported.');
// The rest of an oversized body is not worth reading: the connection closes after the answer.
const tooLarge = () => new HttpError(413, 'The request body is too large.', undefined, { Connection: 'close' });

export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Checks a request body the way the services would, before anything is forwarded: JSON only
 * (415), identity encoding and UTF-8 only (415), at most `limit` bytes (413), parseable (400),
 * and no string or key that cannot be stored as text, such as one holding U+0000 (422).
 * Resolves to the exact bytes received, which are what the service gets; undefined when the
 * request has no body.
 */
export async function readJsonBody(req: IncomingMessage, limit = BODY_LIMIT_BYTES): Promise<Buffer | undefined> {
  if (!hasBody(req)) return undefined;
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type)) throw unsupportedType();
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedEncoding();
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') throw unsupportedEncoding();
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw tooLarge();

  const body = await collect(req, limit);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
  requireStorableText(parsed);
  return body;
}

/** Reads the whole body, stopping (without destroying the socket, so 413 can be sent) past `limit`. */
function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // The client went away mid-body: nobody is left to answer, and nothing failed on our side.
    const incomplete = () => {
      cleanup();
      reject(badRequest('The request body was not sent completely.'));
    };
    const onError = incomplete;
    const onClose = incomplete;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
