/** How much of a validation failure a 422 lists. */
export interface FieldErrorLimits {
  /** Field messages listed at most; the count of the rest is given as `errors_omitted`. */
  maxFieldErrors: number;
  /** Characters of one message (and of the top-level message) at most. */
  maxMessageLength: number;
}

export const DEFAULT_FIELD_ERROR_LIMITS: FieldErrorLimits = { maxFieldErrors: 20, maxMessageLength: 300 };

/** The most field messages any 422 keeps before it is rendered; also the highest configurable limit. */
export const FIELD_ERRORS_CEILING = 1_000;

/** A field name (a path such as `events.3` or a client's own key) is shown up to this many characters. */
export const MAX_FIELD_NAME_LENGTH = 100;

const ELLIPSIS = '…';

/** `text` cut to at most `max` characters, marked with an ellipsis when cut. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}${ELLIPSIS}`;
}

/** A field name as a 422 shows it: bounded, since a client chooses the names of unknown keys. */
export const fieldName = (field: string) => truncateText(field, MAX_FIELD_NAME_LENGTH);

/**
 * The first `maxFieldErrors` messages of `errors` (in field order), each cut to
 * `maxMessageLength`, and how many messages were left out.
 */
export function boundFieldErrors(errors: Record<string, string[]>, limits: FieldErrorLimits): { errors: Record<string, string[]>; omitted: number } {
  // No prototype: a client's key such as `__proto__` is then just a name.
  const kept: Record<string, string[]> = Object.create(null);
  let listed = 0;
  let omitted = 0;
  for (const [field, messages] of Object.entries(errors)) {
    for (const message of messages) {
      if (listed >= limits.maxFieldErrors) {
        omitted += 1;
        continue;
      }
      (kept[field] ??= []).push(truncateText(message, limits.maxMessageLength));
      listed += 1;
    }
  }
  return { errors: kept, omitted };
}

/**
 * Gathers field messages as a validator finds them, keeping at most `limit` distinct ones and
 * counting the rest, so that the cost of reporting stays bounded whatever the input.
 */
export class FieldErrorCollector {
  readonly errors: Record<string, string[]> = Object.create(null);
  private listed = 0;
  omitted = 0;

  constructor(private readonly limit = FIELD_ERRORS_CEILING) {}

  get full(): boolean {
    return this.listed >= this.limit;
  }

  get empty(): boolean {
    return this.listed === 0 && this.omitted === 0;
  }

  add(field: string, message: string): void {
    const name = fieldName(field);
    const messages = this.errors[name];
    if (messages?.includes(message)) return;
    if (this.full) {
      this.omitted += 1;
      return;
    }
    if (messages) messages.push(message);
    else this.errors[name] = [message];
    this.listed += 1;
  }
}
