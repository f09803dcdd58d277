import { z } from 'zod';
import { id, timestamp, uuid } from './common';
import { WEBHOOK_EVENTS } from './webhooks';

const responseTime = z
  .object({
    p50: z.number().int().min(0).nullable().meta({ description: 'Median, in milliseconds; null without an answered attempt.' }),
    p95: z.number().int().min(0).nullable().meta({ description: '95th percentile, in milliseconds; null without an answered attempt.' }),
  })
  .meta({
    description:
      'Response times of the attempts that got an HTTP answer, estimated from a histogram whose buckets are about 25 % wide (the figure is within its bucket). Attempts without an answer (timeouts, refused connections) count as failures, not here.',
  });

const window = (span: string) =>
  z
    .object({
      attempts: z
        .number()
        .int()
        .min(0)
        .meta({ description: `Attempts made in the ${span}.` }),
      successes: z.number().int().min(0).meta({ description: 'Attempts answered with a 2xx.' }),
      failures: z.number().int().min(0).meta({ description: 'Every other attempt: another status, or no answer.' }),
      response_time_ms: responseTime,
    })
    .meta({ description: `Attempts of the ${span}, by the minute (the current minute and the ones before it).` });

const lastError = z
  .object({
    at: timestamp().meta({ description: 'When the failed attempt started.' }),
    status_code: z.number().int().nullable().meta({ description: 'The receiver’s HTTP status, or null when it never answered.' }),
    message: z.string().meta({ description: '`HTTP <status>`, or why there was no answer (timeout, connection refused, address not allowed...).' }),
  })
  .meta({ description: 'The last failed attempt.' });

export const CIRCUIT_BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

export const webhookHealth = z
  .object({
    webhook_id: id(),
    computed_at: timestamp().meta({ description: 'When these figures were read.' }),
    last_hour: window('last hour'),
    last_day: window('last 24 hours'),
    circuit_breaker: z
      .object({
        state: z.enum(CIRCUIT_BREAKER_STATES).meta({
          description:
            '`closed`: attempts flow. `open`: the endpoint failed too often; its deliveries wait until `retry_at`. `half_open`: the wait is over; the next attempt is a probe whose success closes the breaker.',
        }),
        changed_at: timestamp().nullable().meta({ description: 'When the breaker last opened or closed; null if it never did.' }),
        retry_at: timestamp().nullable().meta({ description: 'While open: when a probe may go.' }),
      })
      .meta({ description: 'Each delivery replica keeps a breaker per endpoint; this is the latest transition any of them recorded.' }),
    last_success_at: timestamp().nullable().meta({ description: 'When the last successful attempt started.' }),
    last_error: lastError.nullable(),
    failing_since: timestamp().nullable().meta({ description: 'The first failed attempt after the last success, while every attempt since has failed; null otherwise.' }),
    failing_notice_sent_at: timestamp().nullable().meta({ description: 'When `webhook.failing` was sent about the current streak of failures; null if not (yet).' }),
    disable_at: timestamp().nullable().meta({ description: 'While failing: when the webhook will be switched off if every attempt keeps failing until then.' }),
  })
  .meta({
    description: 'How a webhook’s endpoint has been answering: attempts and response times of the last hour and day, its circuit breaker, its last error, and its failing streak.',
    examples: [
      {
        webhook_id: 3,
        computed_at: '2026-01-15T09:00:00.123456Z',
        last_hour: { attempts: 120, successes: 117, failures: 3, response_time_ms: { p50: 84, p95: 310 } },
        last_day: { attempts: 2_840, successes: 2_801, failures: 39, response_time_ms: { p50: 80, p95: 295 } },
        circuit_breaker: { state: 'closed', changed_at: '2026-01-15T08:42:10.000000Z', retry_at: null },
        last_success_at: '2026-01-15T08:59:58.512034Z',
        last_error: { at: '2026-01-15T08:41:55.101200Z', status_code: 503, message: 'HTTP 503' },
        failing_since: null,
        failing_notice_sent_at: null,
        disable_at: null,
      },
    ],
  });

export type WebhookHealth = z.infer<typeof webhookHealth>;

const failingWebhook = z
  .object({ id: id(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), active: z.boolean() })
  .meta({ description: 'The webhook the event is about (never its secret).' });

const streak = {
  since: timestamp().meta({ description: 'The first failed attempt after the last successful one.' }),
  last_success_at: timestamp().nullable().meta({ description: 'The last successful attempt; null if none is on record.' }),
  last_error: lastError.nullable(),
};

const operationalEnvelope = {
  id: uuid().meta({ description: 'The event id: the same for every webhook that receives it; one per event and failing streak.' }),
  created_at: timestamp(),
  team_id: id(),
};

export const webhookFailingEvent = z
  .object({
    ...operationalEnvelope,
    event: z.literal('webhook.failing'),
    webhook: failingWebhook,
    failure: z.object({ ...streak, disable_at: timestamp().meta({ description: 'When the webhook will be switched off if its attempts keep failing.' }) }),
  })
  .meta({ description: 'Sent once per streak of failures, when every attempt to a webhook has failed for a while (a day by default).' });

export const webhookDisabledEvent = z
  .object({
    ...operationalEnvelope,
    event: z.literal('webhook.disabled'),
    webhook: failingWebhook.extend({
      active: z.literal(false),
      disabled_reason: z.string().meta({ description: 'The reason recorded on the webhook.' }),
      disabled_at: timestamp(),
    }),
    failure: z.object(streak),
  })
  .meta({ description: 'Sent when a webhook whose every attempt failed for too long (5 days by default) has been switched off. Setting `active` to true again sends nothing.' });
