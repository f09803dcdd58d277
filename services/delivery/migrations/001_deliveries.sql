-- One row per (event, webhook): the id is derived from both, so a redelivered event inserts
-- nothing new. `body` holds the exact bytes every attempt sends.
CREATE TABLE deliveries (
  id uuid PRIMARY KEY,
  event_id uuid NOT NULL,
  event text NOT NULL,
  team_id bigint NOT NULL,
  webhook_id bigint NOT NULL,
  body bytea NOT NULL,
  trace_context jsonb,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  failure_reason text CHECK (failure_reason IN ('gone', 'exhausted', 'webhook_deleted', 'webhook_inactive')),
  attempt_count integer NOT NULL DEFAULT 0,
  -- While pending: when the next attempt is due. A sender that claims the delivery moves it to the
  -- end of its lease, so a sender that dies mid-attempt only delays the delivery.
  next_attempt_at timestamptz,
  lease_token uuid,
  event_created_at timestamptz NOT NULL,
  redelivery_of uuid REFERENCES deliveries (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);

CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_webhook_newest_first ON deliveries (team_id, webhook_id, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  url text NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  response_body text,
  PRIMARY KEY (delivery_id, number)
);
