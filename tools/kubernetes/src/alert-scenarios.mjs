// One scenario per alert of the chart's PrometheusRule, for `promtool test rules`: series under
// which the alert must fire (with the labels it must carry) and near-miss series under which it
// must stay silent. Every scenario also runs every other alert, which must stay silent in it.
// Thresholds come from the chart's values (ctx.limits = metrics.prometheusRule), scrape jobs and
// the namespace from the rendered release (ctx.jobs, ctx.ns), so the scenarios follow the chart.
//
// Series notation is promtool's: 'a+bxN' is a, a+b, ... N+1 samples, one per minute.

/** A series line; `labels` is an object. */
export const series = (name, labels, values) => ({
  series: `${name}{${Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(',')}}`,
  values,
});

/** `up` for every scrape job of the release, one pod each, healthy, except those listed. */
function up(ctx, { down = [], missing = [], minutes = 60 } = {}) {
  return Object.entries(ctx.jobs)
    .filter(([service]) => !missing.includes(service))
    .map(([service, job]) => series('up', { namespace: ctx.ns, job, pod: `${job}-0` }, down.includes(service) ? `0x${minutes}` : `1x${minutes}`));
}

/** Histogram buckets (cumulative), each a rate per minute, for a metric with labels. */
function histogram(name, labels, perMinuteByBucket, minutes) {
  let cumulative = 0;
  return Object.entries(perMinuteByBucket).map(([le, count]) => {
    cumulative += count;
    return series(`${name}_bucket`, { ...labels, le }, `0+${cumulative}x${minutes}`);
  });
}

export const SCENARIOS = {
  WorklaneServiceDown: (ctx) => ({
    fires: {
      evalTime: '10m',
      labels: { namespace: ctx.ns, job: ctx.jobs.token },
      series: [
        ...up(ctx, { missing: ['token'] }),
        series('up', { namespace: ctx.ns, job: ctx.jobs.token, pod: 'token-0' }, '0x30'),
        series('up', { namespace: ctx.ns, job: ctx.jobs.token, pod: 'token-1' }, '0x30'),
      ],
    },
    silent: {
      evalTime: '10m',
      // One of two pods down is Kubernetes' business; another namespace's outage is not ours.
      series: [
        ...up(ctx, { missing: ['token'] }),
        series('up', { namespace: ctx.ns, job: ctx.jobs.token, pod: 'token-0' }, '0x30'),
        series('up', { namespace: ctx.ns, job: ctx.jobs.token, pod: 'token-1' }, '1x30'),
        series('up', { namespace: 'elsewhere', job: ctx.jobs.project, pod: 'project-0' }, '0x30'),
      ],
    },
  }),

  WorklaneServiceAbsent: (ctx) => ({
    fires: {
      evalTime: '10m',
      labels: { namespace: ctx.ns, job: ctx.jobs.delivery },
      series: [...up(ctx, { missing: ['delivery'] }), series('up', { namespace: 'elsewhere', job: ctx.jobs.delivery, pod: 'delivery-0' }, '1x30')],
    },
    silent: { evalTime: '10m', series: up(ctx) },
  }),

  WorklaneGatewayHighErrorRatio: (ctx) => {
    const request = (service, status, perMinute) =>
      series('worklane_http_requests_total', { namespace: ctx.ns, service, method: 'POST', route: '/api/v1/teams/:team_id/issues', status }, `0+${perMinute}x40`);
    const failing = Math.ceil(ctx.limits.gateway5xxRatio * 100 * 3);
    return {
      fires: { evalTime: '15m', labels: {}, series: [...up(ctx), request('gateway', '201', 100), request('gateway', '503', failing)] },
      silent: {
        evalTime: '15m',
        // Below the ratio at the gateway; another service's errors are not the gateway's.
        series: [...up(ctx), request('gateway', '201', 100), request('gateway', '503', Math.floor((ctx.limits.gateway5xxRatio * 100) / 2)), request('issue', '500', 50)],
      },
    };
  },

  WorklaneGatewayHighLatency: (ctx) => {
    const labels = { namespace: ctx.ns, service: 'gateway', method: 'GET', route: '/api/v1/teams/:team_id/issues' };
    const slowBucket = String(ctx.limits.gatewayLatencyP99Seconds * 2.5);
    return {
      fires: {
        evalTime: '20m',
        labels: {},
        series: [...up(ctx), ...histogram('worklane_http_request_duration_seconds', labels, { [String(ctx.limits.gatewayLatencyP99Seconds)]: 0, [slowBucket]: 10, '+Inf': 0 }, 40)],
      },
      silent: {
        evalTime: '20m',
        series: [
          ...up(ctx),
          ...histogram(
            'worklane_http_request_duration_seconds',
            labels,
            { [String(ctx.limits.gatewayLatencyP99Seconds / 4)]: 10, [String(ctx.limits.gatewayLatencyP99Seconds)]: 0, '+Inf': 0 },
            40,
          ),
        ],
      },
    };
  },

  WorklaneDeliveryFailureRatioHigh: (ctx) => {
    const deliveries = (outcome, perMinute) =>
      series('worklane_webhook_deliveries_total', { namespace: ctx.ns, service: 'delivery', pod: 'delivery-0', outcome }, `0+${perMinute}x80`);
    return {
      fires: {
        evalTime: '60m',
        labels: {},
        // A third of the finished deliveries exhausted their retries.
        series: [...up(ctx), deliveries('succeeded', 10), deliveries('exhausted', 5)],
      },
      silent: {
        evalTime: '60m',
        // Few exhausted; receivers that answered 410 and deliveries abandoned with their webhook are no failures.
        series: [
          ...up(ctx),
          deliveries('succeeded', 10),
          deliveries('exhausted', ctx.limits.deliveryFailureRatio * 10 * 0.5),
          deliveries('gone', 1),
          deliveries('webhook_deleted', 30),
          deliveries('webhook_inactive', 30),
        ],
      },
    };
  },

  WorklaneDeliveryLagHigh: (ctx) => {
    const labels = { namespace: ctx.ns, service: 'delivery', pod: 'delivery-0' };
    const limit = ctx.limits.deliveryLagP90Seconds;
    return {
      fires: {
        evalTime: '40m',
        labels: {},
        series: [...up(ctx), ...histogram('worklane_webhook_delivery_lag_seconds', labels, { [String(limit / 2)]: 0, [String(limit * 3)]: 10, '+Inf': 0 }, 60)],
      },
      silent: {
        evalTime: '40m',
        series: [...up(ctx), ...histogram('worklane_webhook_delivery_lag_seconds', labels, { [String(limit / 2)]: 10, [String(limit * 3)]: 0, '+Inf': 0 }, 60)],
      },
    };
  },

  WorklaneOutboxBacklog: (ctx) => {
    const backlog = (namespace, value) => series('worklane_outbox_backlog', { namespace, service: 'issue', pod: 'issue-0' }, `${value}x30`);
    return {
      fires: { evalTime: '15m', labels: {}, series: [...up(ctx), backlog(ctx.ns, ctx.limits.outboxBacklog * 2)] },
      silent: { evalTime: '15m', series: [...up(ctx), backlog(ctx.ns, ctx.limits.outboxBacklog), backlog('elsewhere', ctx.limits.outboxBacklog * 5)] },
    };
  },

  WorklaneDeliveryConsumerBacklog: (ctx) => {
    const pending = (value) => series('worklane_delivery_consumer_pending', { namespace: ctx.ns, service: 'delivery', pod: 'delivery-0' }, `${value}x30`);
    return {
      fires: { evalTime: '15m', labels: {}, series: [...up(ctx), pending(ctx.limits.deliveryConsumerPending + 1000)] },
      silent: { evalTime: '15m', series: [...up(ctx), pending(Math.floor(ctx.limits.deliveryConsumerPending / 2))] },
    };
  },

  WorklaneOutboxDeadLettered: (ctx) => {
    const deadLettered = (values) => series('worklane_outbox_dead_lettered_total', { namespace: ctx.ns, service: 'issue', pod: 'issue-0', reason: 'payload_too_large' }, values);
    return {
      fires: { evalTime: '8m', labels: { reason: 'payload_too_large' }, series: [...up(ctx), deadLettered('0x5 1x30')] },
      // Dead letters older than the 15-minute window do not alert again.
      silent: { evalTime: '30m', series: [...up(ctx), deadLettered('3x40')] },
    };
  },

  WorklaneEventStreamNearlyFull: (ctx) => {
    const labels = { namespace: ctx.ns, service: 'delivery', pod: 'delivery-0', stream: 'ISSUE_EVENTS' };
    const gauges = ({ bytes, maxBytes, messages = 10, maxMessages = 10_000_000, age = 60, maxAge = 604_800 }) => [
      series('worklane_stream_bytes', labels, `${bytes}x20`),
      series('worklane_stream_max_bytes', labels, `${maxBytes}x20`),
      series('worklane_stream_messages', labels, `${messages}x20`),
      series('worklane_stream_max_messages', labels, `${maxMessages}x20`),
      series('worklane_stream_oldest_age_seconds', labels, `${age}x20`),
      series('worklane_stream_max_age_seconds', labels, `${maxAge}x20`),
    ];
    const near = ctx.limits.streamUsageRatio + (1 - ctx.limits.streamUsageRatio) / 2;
    return {
      fires: { evalTime: '10m', labels: { stream: 'ISSUE_EVENTS' }, series: [...up(ctx), ...gauges({ bytes: Math.round(near * 1_000_000), maxBytes: 1_000_000 })] },
      silent: {
        evalTime: '10m',
        // Half full; and a limit of 0 means no limit, not a full stream.
        series: [...up(ctx), ...gauges({ bytes: 500_000, maxBytes: 1_000_000, messages: 500, maxMessages: 0, age: 3600 })],
      },
    };
  },
};

/** Recording rules, by name, with the series they read and the value they must produce. None yet. */
export const RECORDING_SCENARIOS = {};
