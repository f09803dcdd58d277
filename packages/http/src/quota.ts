import { HttpError, type ErrorBody } from './errors';

/** The stable `code` of a quota refusal, for clients to branch on. */
export const QUOTA_EXCEEDED = 'quota_exceeded' as const;

/**
 * 409 for a create that would take a team past a per-team quota:
 * `{"message": "The team has reached its limit of 100 webhooks.", "code": "quota_exceeded", "limit": 100}`.
 * Deleting one of the team's resources frees a slot; the operator sets the limits.
 */
export class QuotaExceededHttpError extends HttpError {
  constructor(
    message: string,
    readonly limit: number,
  ) {
    super(409, message, undefined, {}, QUOTA_EXCEEDED);
  }

  override get body(): ErrorBody & { limit: number } {
    return { message: this.message, code: QUOTA_EXCEEDED, limit: this.limit };
  }

  /** The message is Worklane's own and short; nothing to bound. */
  override boundedBody(): ErrorBody & { limit: number } {
    return this.body;
  }
}

/** The HTTP answer to a quota error of the data layer (anything else is passed through). */
export function quotaAnswer(error: unknown): unknown {
  // Matched by name: @worklane/db's TeamQuotaExceededError, without making HTTP depend on the database.
  const limit = (error as { limit?: unknown } | null)?.limit;
  if (error instanceof Error && error.name === 'TeamQuotaExceededError' && typeof limit === 'number') {
    return new QuotaExceededHttpError(error.message, limit);
  }
  return error;
}

/** Runs `create`, turning a per-team quota refusal into its 409. */
export async function withQuotaAnswer<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    throw quotaAnswer(error);
  }
}
