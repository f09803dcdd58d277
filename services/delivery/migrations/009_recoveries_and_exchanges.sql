-- Recovery jobs (POST .../webhooks/{webhook}/recover): re-send every event that failed to reach a
-- webhook in a window, once each, at the webhook's pace. A job is stored before it is answered and
-- each of its steps is one transaction by whichever replica locks its row first, so it survives a
-- restart: `after_*` is how far it got, `next_step_at` when it may go on.
CREATE TABLE delivery_recoveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  team_id bigint NOT NULL,
  webhook_id bigint NOT NULL,
  since timestamptz NOT NULL,
  -- The end of the window: the `until` asked for, or the moment the job was created.
  until timestamptz NOT NULL,
  -- The `until` asked for, null when none was: asking again for the same window answers this job.
  requested_until timestamptz,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  found integer NOT NULL,
  queued integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  -- Re-sends started per second: the webhook's rate limit, or the operator's default pace.
  pace_per_second integer NOT NULL CHECK (pace_per_second >= 1),
  error text,
  after_created_at timestamptz,
  after_id uuid,
  next_step_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One job at a time per webhook.
CREATE UNIQUE INDEX delivery_recoveries_one_active ON delivery_recoveries (webhook_id) WHERE status IN ('queued', 'running');
CREATE INDEX delivery_recoveries_due ON delivery_recoveries (next_step_at) WHERE status IN ('queued', 'running');
CREATE INDEX delivery_recoveries_finished ON delivery_recoveries (finished_at) WHERE finished_at IS NOT NULL;

-- The re-sends a job made, counted for its progress.
ALTER TABLE deliveries ADD COLUMN recovery_id bigint;
CREATE INDEX deliveries_by_recovery ON deliveries (recovery_id) WHERE recovery_id IS NOT NULL;
-- A webhook's failed deliveries by time: what a recovery goes through and the log's status=failed
-- filter. Small: only failed rows are in it.
CREATE INDEX deliveries_failed_by_webhook ON deliveries (team_id, webhook_id, created_at, id) WHERE status = 'failed';
-- Every delivery of one event to one webhook (its original and its re-sends): the log's event_id
-- filter, and whether a recovery still has to re-send an event.
CREATE INDEX deliveries_by_event ON deliveries (webhook_id, event_id);

-- What each attempt exchanged: the request headers sent and the response headers received, bounded
-- and without credentials. The body sent is the delivery's own `body`, stored once for all attempts.
ALTER TABLE delivery_attempts ADD COLUMN request_headers jsonb;
ALTER TABLE delivery_attempts ADD COLUMN response_headers jsonb;
