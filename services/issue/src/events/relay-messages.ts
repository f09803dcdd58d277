/** Messages between the API's thread and the outbox relay's (relay-host.ts, relay-service.ts). */
export const RELAY_MESSAGES = {
  /** API → relay: a create committed its event, leased to this relay: publish it now. */
  committed: 'relay:committed',
  /** Relay → API: whether creates may hand their events over (false while it cannot publish). */
  ready: 'relay:ready',
} as const;
