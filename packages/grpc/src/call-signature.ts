import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';

const CALLER = 'x-worklane-caller';
const TIMESTAMP = 'x-worklane-timestamp';
const SIGNATURE = 'x-worklane-signature';
const MAX_SKEW_MS = 60_000;

const sign = (key: string, caller: string, path: string, timestamp: string) =>
  createHmac('sha256', key).update(`${caller}\n${path}\n${timestamp}`).digest('hex');

/** Adds the calling service's name and an HMAC over it, the method path and the time. */
export function signCall(metadata: Metadata, key: string, caller: string, path: string, now = Date.now()): void {
  const timestamp = String(now);
  metadata.set(CALLER, caller);
  metadata.set(TIMESTAMP, timestamp);
  metadata.set(SIGNATURE, sign(key, caller, path, timestamp));
}

/** The calling service's name when the call is signed with `key` and fresh; otherwise undefined. */
export function verifyCall(metadata: Metadata, key: string, path: string, now = Date.now()): string | undefined {
  const [caller] = metadata.get(CALLER);
  const [timestamp] = metadata.get(TIMESTAMP);
  const [given] = metadata.get(SIGNATURE);
  if (typeof caller !== 'string' || typeof timestamp !== 'string' || typeof given !== 'string') return undefined;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return undefined;
  const expected = Buffer.from(sign(key, caller, path, timestamp), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected) ? caller : undefined;
}
