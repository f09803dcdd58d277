import { createLogger, promClient } from '@worklane/observability';
import type { AllowedCidrs, PinnedDispatchers } from '@worklane/webhooks';
import type { WebhookDirectory } from '../../src/clients/webhooks';
import type { DeliveryStore } from '../../src/data/deliveries';
import { createDeliveryMetrics } from '../../src/metrics';
import type { SenderOptions } from '../../src/sending/sender';

/**
 * The options of a sender under test on `store` (a stand-in, as a test needs it): small budgets,
 * a poll interval far longer than any test (only wake-ups move it), no receiver, silent logs.
 */
export function testSenderOptions(store: Partial<DeliveryStore>, overrides: Partial<SenderOptions> = {}): SenderOptions {
  return {
    store: store as DeliveryStore,
    webhooks: {} as WebhookDirectory,
    dispatchers: {} as PinnedDispatchers,
    logger: createLogger('delivery-test', 'silent'),
    metrics: createDeliveryMetrics(new promClient.Registry()),
    allowedCidrs: {} as AllowedCidrs,
    userAgent: 'test',
    schedule: [0, 1],
    timeoutMs: 1_000,
    headersTimeoutMs: 1_000,
    dnsTimeoutMs: 1_000,
    concurrency: 10,
    perTeamConcurrency: 2,
    perWebhookConcurrency: 2,
    breaker: { failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000 },
    pollIntervalMs: 60_000,
    leaseMs: 30_000,
    ...overrides,
  };
}
