// A lean HTTP/1.1 client for the benchmarks' load: node:http with keep-alive, so the load costs
// the machine as little as it can, and bodies counted rather than kept unless asked for.
import { Agent, request as httpRequest } from 'node:http';

/** A keep-alive agent; give each kind of traffic its own so one cannot queue behind another. */
export const keepAliveAgent = (maxSockets = 64) => new Agent({ keepAlive: true, maxSockets });

/**
 * One request. Resolves to { status, headers, bytes, text? } (text only with keepBody), or to
 * { status: 0, error } when the connection failed or `timeoutMs` passed without an answer.
 * A response that arrives before the server drops the connection (a 413 cutting an upload
 * short) counts as that response.
 */
export function send(url, { method = 'GET', agent, headers = {}, body, keepBody = false, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve) => {
    let settled = false;
    const done = (result) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
    const req = httpRequest(url, {
      method,
      agent,
      headers: { accept: 'application/json', ...(payload ? { 'content-length': payload.length } : {}), ...headers },
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      done({ status: 0, error: 'timeout' });
    });
    req.on('response', (res) => {
      const chunks = [];
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        if (keepBody) chunks.push(chunk);
      });
      const finish = () => done({ status: res.statusCode, headers: res.headers, bytes, text: keepBody ? Buffer.concat(chunks).toString('utf8') : undefined });
      res.on('end', finish);
      res.on('error', finish);
      res.on('aborted', finish);
    });
    req.on('error', (error) => done({ status: 0, error: error.code ?? error.message }));
    req.end(payload);
  });
}

/** The rel="next" target of a Link header, resolved against `base`; undefined when there is none. */
export function nextLink(linkHeader, base) {
  if (!linkHeader) return undefined;
  for (const part of String(linkHeader).split(',')) {
    const match = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (match && /\brel\s*=\s*"?next"?/i.test(match[2])) return new URL(match[1], base).toString();
  }
  return undefined;
}

/** Counts by key: tally(counts, '201') -> counts['201'] += 1. */
export const tally = (counts, key) => {
  counts[key] = (counts[key] ?? 0) + 1;
};
