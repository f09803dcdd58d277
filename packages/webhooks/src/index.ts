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
