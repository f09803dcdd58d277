export {
  ED25519_PUBLIC_KEY_PREFIX,
  bodySignature,
  deliveryHeaders,
  ed25519PublicKey,
  ed25519Signature,
  newEd25519Key,
  signatureHeaders,
  signingSecrets,
  standardSignature,
  type DeliveryHeaderInput,
  type PreviousSigningSecret,
  type SignatureInput,
} from './signing';
export { DEFAULT_RETRY_SCHEDULE, RETRY_JITTER, jittered, parseRetrySchedule, nextRetryDelay, parseRetryAfter, isSuccess, type RetryOptions } from './retry-schedule';
export { pinnedConnector, PinnedDispatchers, type PinnedDispatcherOptions } from './pinned-dispatcher';
export { sendWebhookRequest, describeRequestError, RESPONSE_EXCERPT_BYTES, type WebhookRequest, type WebhookResponse } from './webhook-request';
export { CachingResolver, dnsServersLookup, parseHostsFile, type CachingResolverOptions, type DnsServersOptions, type DnsLookup } from './resolver';
export {
  AddressPolicyError,
  AllowedCidrs,
  isPermittedAddress,
  isPublicAddress,
  nonPublicRange,
  resolvePublicAddresses,
  type AddressRefusal,
  type CheckedAddress,
  type HostLookup,
  type ResolveOptions,
} from './address-policy';
export { SecretBox, SecretBoxError, type SecretBoxKeys } from './secret-box';
export { receiverAddressSettings } from './settings';
