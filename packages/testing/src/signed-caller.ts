// Calls a service's express app in-process with identities signed the way the gateway signs them.
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type { Signer } from '@worklane/config';
import { signIdentity } from '@worklane/http';

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string>;
}

export interface Caller {
  get(path: string): Promise<Reply>;
  delete(path: string): Promise<Reply>;
  post(path: string, body?: unknown): Promise<Reply>;
  patch(path: string, body?: unknown): Promise<Reply>;
  /** Any method, with a raw body and headers, for the edge cases of the HTTP layer. */
  send(method: string, path: string, options?: { body?: string; headers?: Record<string, string> }): Promise<Reply>;
}

const toReply = (response: request.Response): Reply => ({
  status: response.status,
  body: response.body,
  text: response.text,
  headers: response.headers as Record<string, string>,
});

/**
 * A caller acting for `teamId` (token id = user id), as the gateway would forward a token of that
 * team; `issuer` is the gateway's signer (signerOf(keys, 'gateway')).
 */
export function signedCaller(app: RequestListener, issuer: Signer, teamId: number, userId = 1): Caller {
  const start = (method: string, path: string) =>
    request(app)
      [method.toLowerCase() as 'get'](path)
      .set(signIdentity(issuer, method, path, { teamId, userId, tokenId: userId }));
  const json = (method: string) => async (path: string, body?: unknown) => {
    let call = start(method, path).set('Accept', 'application/json');
    if (body !== undefined) call = call.set('Content-Type', 'application/json').send(JSON.stringify(body));
    return toReply(await call);
  };
  return {
    get: json('GET'),
    delete: json('DELETE'),
    post: json('POST'),
    patch: json('PATCH'),
    async send(method, path, options = {}) {
      let call = start(method, path);
      for (const [name, value] of Object.entries(options.headers ?? {})) call = call.set(name, value);
      if (options.body !== undefined) call = call.send(options.body);
      return toReply(await call);
    },
  };
}
