-- Endpoint health (docs/webhook-health.md). Both tables are written as attempts are recorded, so
-- reading a webhook's health never reads the delivery log itself, however large it is.

-- One row per webhook that has had an attempt: its latest outcomes, its failing streak and the
-- circuit breaker's latest transition.
CREATE TABLE webhook_health (
  webhook_id bigint PRIMARY KEY,
  team_id bigint NOT NULL,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  -- The last failed attempt: the receiver's HTTP status, or null with a message when it never answered.
  last_error_status integer,
  last_error_message text,
  -- The first failed attempt after the last successful one; null while the endpoint succeeds.
  failing_since timestamptz,
  -- Failures before this time start no streak (set when auto-disable switches the webhook off).
  streak_reset_at timestamptz,
  -- The streak (its failing_since) for which webhook.failing was sent, so it is sent once per streak.
  failing_notice_for timestamptz,
  failing_notice_at timestamptz,
  -- When auto-disable last switched the webhook off.
  disabled_at timestamptz,
  -- The latest transition of a delivery replica's circuit breaker for this endpoint.
  breaker_state text NOT NULL DEFAULT 'closed' CHECK (breaker_state IN ('closed', 'open')),
  breaker_changed_at timestamptz,
  breaker_retry_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The auto-disable worker reads only the webhooks that are failing, oldest streak first.
CREATE INDEX webhook_health_failing ON webhook_health (failing_since) WHERE failing_since IS NOT NULL;
CREATE INDEX webhook_health_idle ON webhook_health (updated_at);

-- Attempts per webhook and minute: counts, and a histogram of the response times of the attempts
-- that got an answer (bucket i counts durations up to the i-th bound of src/health/latency.ts; the
-- last bucket counts everything longer). The last hour and day are at most 1,440 rows per webhook.
CREATE TABLE webhook_health_minutes (
  webhook_id bigint NOT NULL,
  minute timestamptz NOT NULL,
  attempts integer NOT NULL,
  successes integer NOT NULL,
  failures integer NOT NULL,
  duration_buckets integer[] NOT NULL,
  PRIMARY KEY (webhook_id, minute)
);

-- Rows older than a day are removed by the health worker, oldest first.
CREATE INDEX webhook_health_minutes_by_age ON webhook_health_minutes (minute);
