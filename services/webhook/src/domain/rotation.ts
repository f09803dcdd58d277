import type { ErrorBody } from '@worklane/api-contract';
import { HttpError } from '@worklane/http';

/** How secret rotations are bounded (WEBHOOK_PREVIOUS_SECRETS_MAX, WEBHOOK_SECRET_OVERLAP_*_SECONDS). */
export interface RotationLimits {
  maxPreviousSecrets: number;
  defaultOverlapSeconds: number;
  maxOverlapSeconds: number;
}

const SECRET_ROTATION_LIMIT = 'secret_rotation_limit' as const;

/**
 * 409 for a rotation that would give a webhook one old secret too many still signing:
 * `{"message": ..., "code": "secret_rotation_limit", "limit": 5}`.
 */
export class RotationLimitError extends HttpError {
  constructor(readonly limit: number) {
    super(
      409,
      `The webhook already has ${limit} old ${limit === 1 ? 'secret' : 'secrets'} that still sign; wait until one expires or rotate with overlap_seconds 0.`,
      undefined,
      {},
      SECRET_ROTATION_LIMIT,
    );
  }

  override get body(): ErrorBody & { limit: number } {
    return { message: this.message, code: SECRET_ROTATION_LIMIT, limit: this.limit };
  }

  /** The message is Worklane's own and short; nothing to bound. */
  override boundedBody(): ErrorBody & { limit: number } {
    return this.body;
  }
}
