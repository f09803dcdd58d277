import { list, z } from '@worklane/config';
import { AllowedCidrs } from './address-policy';

/**
 * The receiver-address settings shared by the webhook service (checks a URL when it is saved)
 * and the delivery service (checks it again before every attempt): both must judge alike.
 */
export const receiverAddressSettings = {
  WEBHOOK_ALLOWED_CIDRS: list('')
    .transform((cidrs, context) => {
      try {
        return AllowedCidrs.parse(cidrs);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .describe('Comma-separated CIDR ranges webhook receivers may resolve to although they are not public (tests, on-premise receivers)'),
  WEBHOOK_DNS_SERVERS: list('').describe('DNS servers (ip or ip:port, comma-separated) for resolving webhook hosts; empty: the system resolver'),
};
