import { validationFailed } from '@worklane/http';
import type { Logger } from '@worklane/observability';
import { AddressPolicyError, resolvePublicAddresses, type AddressRefusal, type AllowedCidrs, type HostLookup } from '@worklane/webhooks/address-policy';

export interface ReceiverPolicy {
  allowedCidrs: AllowedCidrs;
  /** Defaults to the system resolver. */
  lookup?: HostLookup | undefined;
  timeoutMs?: number;
}

// The client learns that the host is refused, not what it resolves to: that would map internal names.
const MESSAGES: Record<AddressRefusal, string> = {
  non_public: 'The url field must point to a public address; private, loopback, link-local and other reserved addresses are not allowed.',
  unresolvable: 'The url field host could not be resolved.',
};

/**
 * Checks that a webhook URL's host resolves only to addresses a delivery may reach; otherwise a
 * 422 on `url`. The delivery service checks again on every attempt, so this is the early answer
 * to the client, not the only defence.
 */
export async function requirePublicReceiver(url: string, policy: ReceiverPolicy, logger: Logger, onRefusal: (reason: AddressRefusal) => void): Promise<void> {
  const { hostname } = new URL(url);
  try {
    await resolvePublicAddresses(hostname, policy.allowedCidrs, { lookup: policy.lookup, timeoutMs: policy.timeoutMs });
  } catch (error) {
    if (!(error instanceof AddressPolicyError)) throw error;
    onRefusal(error.reason);
    logger.info({ host: error.host, address: error.address, range: error.range, reason: error.reason }, 'webhook url refused');
    throw validationFailed({ url: [MESSAGES[error.reason]] });
  }
}
