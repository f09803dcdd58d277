import { grpc, unaryCall } from '@worklane/grpc';
import type { Identity } from '@worklane/http';
import type { Logger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';

export type Authentication =
  | { outcome: 'authenticated'; identity: Identity }
  /** Missing, malformed, unknown or revoked: 401. */
  | { outcome: 'refused' }
  /** The token service could not answer: 503, never a guess. */
  | { outcome: 'unavailable' };

const REFUSED: Authentication = { outcome: 'refused' };
const UNAVAILABLE: Authentication = { outcome: 'unavailable' };

/** RFC 6750 `Bearer <b64token>`; anything longer than 256 characters cannot be a Worklane token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,256}=*) *$/i;

/** The token of an `Authorization: Bearer` header, or undefined when there is none or it is malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return BEARER.exec(header)?.[1];
}

/** What the server answers when our own call signature is refused: a key mismatch, not a bad token. */
const UNSIGNED_CALLER = 'caller is not signed';

/**
 * Asks the token service about every request: no cache, so a revoked token is refused by the
 * very next request on every replica.
 */
export class TokenAuthenticator {
  private lastWarning = 0;

  constructor(
    private readonly client: tokenV1.TokenServiceClient,
    private readonly deadlineMs: number,
    private readonly logger: Logger,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Authentication> {
    const token = bearerToken(authorization);
    if (!token) return REFUSED;
    try {
      const identity = await unaryCall<tokenV1.Identity__Output>(
        (metadata, options, done) => this.client.Authenticate({ token }, metadata, options, done),
        this.deadlineMs,
      );
      return { outcome: 'authenticated', identity: { teamId: identity.team_id, userId: identity.user_id, tokenId: identity.token_id } };
    } catch (error) {
      const rpc = error as grpc.ServiceError;
      if (rpc.code === grpc.status.UNAUTHENTICATED && rpc.details !== UNSIGNED_CALLER) return REFUSED;
      // Once a second at most: an outage fails every request, and one line says so.
      if (Date.now() - this.lastWarning > 1_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ code: grpc.status[rpc.code] ?? rpc.code, details: rpc.details }, 'token service could not authenticate; failing closed');
      }
      return UNAVAILABLE;
    }
  }
}
