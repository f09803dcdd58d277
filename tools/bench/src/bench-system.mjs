// The system the delivery benchmarks run: every service behind the API on a bench stack, webhooks
// allowed to loopback receivers whose certificate the delivery service trusts, and the policies
// that would pace the load itself (the gateway's rate limits, the per-team fan-out budget) out of
// the way, while still running on every request and event.
import { createRequire } from 'node:module';

import { SERVICE_NODE_OPTIONS } from './process-stats.mjs';

const require = createRequire(import.meta.url);

const UNLIMITED = '1000000';

/**
 * Starts the token, project, webhook, issue, delivery and gateway services on `stack` (from
 * startStack) with `certificate` (from makeCertificate) trusted by the delivery service.
 * `serviceEnv` adds variables per service. Resolves to the System of @worklane/testing; load
 * @worklane/testing only after the build.
 */
export function startBenchSystem({ stack, certificate, serviceEnv = {} }) {
  const { API_STACK, startSystem } = require('@worklane/testing');
  return startSystem({
    services: [...API_STACK],
    env: { NATS_URL: stack.natsUrl, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn', NODE_OPTIONS: SERVICE_NODE_OPTIONS },
    serviceEnv: {
      ...serviceEnv,
      // A benchmark's load comes from a few teams: their fan-out budget (issue 10's per-team
      // fairness, 500 deliveries/s by default) still runs on every event, with its limit out of
      // the way, so the figures measure the pipeline rather than that policy.
      delivery: {
        NODE_EXTRA_CA_CERTS: certificate.certPath,
        DELIVERY_FANOUT_PER_TEAM_PER_SECOND: UNLIMITED,
        DELIVERY_FANOUT_PER_TEAM_BURST: UNLIMITED,
        ...serviceEnv.delivery,
      },
      // The limiter still runs on every request; its limits are out of the way.
      gateway: {
        RATE_LIMIT_PER_SECOND: UNLIMITED,
        RATE_LIMIT_BURST: UNLIMITED,
        RATE_LIMIT_TEAM_PER_SECOND: UNLIMITED,
        RATE_LIMIT_TEAM_BURST: UNLIMITED,
        ...serviceEnv.gateway,
      },
    },
  });
}
