import { sign, verify, type KeyObject } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';

const CALLER = 'x-worklane-caller';
const TIMESTAMP = 'x-worklane-timestamp';
const SIGNATURE = 'x-worklane-signature';
const MAX_SKEW_MS = 60_000;

// The domain prefix keeps a call signature from ever passing as a caller identity of the HTTP API.
const payload = (caller: string, path: string, timestamp: string) => Buffer.from(`worklane-call-v1\n${caller}\n${path}\n${timestamp}`);

/**
 * Adds the calling service's name and its Ed25519 signature over that name, the method path and
 * the time. `key` is the caller's own private key: no other principal holds it.
 */
export function signCall(metadata: Metadata, key: KeyObject, caller: string, path: string, now = Date.now()): void {
  const timestamp = String(now);
  metadata.set(CALLER, caller);
  metadata.set(TIMESTAMP, timestamp);
  metadata.set(SIGNATURE, sign(null, payload(caller, path, timestamp), key).toString('base64url'));
}

/**
 * The calling principal's name when the call is fresh and signed with the private key of the
 * principal it names, whose public key is in `callers`; otherwise undefined.
 */
export function verifyCall(metadata: Metadata, callers: Readonly<Record<string, KeyObject>>, path: string, now = Date.now()): string | undefined {
  const [caller] = metadata.get(CALLER);
  const [timestamp] = metadata.get(TIMESTAMP);
  const [given] = metadata.get(SIGNATURE);
  if (typeof caller !== 'string' || typeof timestamp !== 'string' || typeof given !== 'string') return undefined;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return undefined;
  const key = Object.hasOwn(callers, caller) ? callers[caller] : undefined;
  if (!key || !/^[A-Za-z0-9_-]{86}$/.test(given)) return undefined;
  return verify(null, payload(caller, path, timestamp), key, Buffer.from(given, 'base64url')) ? caller : undefined;
}
