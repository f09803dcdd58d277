/**
 * `Idempotency-Key` on POSTs (docs/api-idempotency.md): the header, its bounds, and the header
 * that marks a replayed answer. Defined here, so that the document and the services that check
 * the key read the same rule.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/**
 * 1 to 255 printable ASCII characters, not starting or ending with a space (HTTP drops those, so
 * such a key could not be told from the one without them). A UUID is the usual choice.
 */
export const IDEMPOTENCY_KEY_PATTERN = '^[!-~]([ -~]*[!-~])?$';
