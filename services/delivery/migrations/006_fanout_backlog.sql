-- Events of a team that is over its fan-out budget (DELIVERY_FANOUT_PER_TEAM_PER_SECOND) wait
-- here, one row per event with the webhooks it goes to, until the budget lets their deliveries be
-- created. One row costs the database what one delivery does, however many webhooks the event has.
CREATE TABLE fanout_backlog (
  seq bigserial PRIMARY KEY,
  -- The event's sequence number in the stream: the order it was published in, whichever replica
  -- or concurrent batch stored it.
  stream_seq bigint NOT NULL,
  team_id bigint NOT NULL,
  event_id uuid NOT NULL UNIQUE,
  event text NOT NULL,
  body bytea NOT NULL,
  trace_context jsonb,
  event_created_at timestamptz NOT NULL,
  webhook_ids bigint[] NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT now()
);

-- A team's events in the order they were published; also the skip scan that finds the teams waiting.
CREATE INDEX fanout_backlog_team_order ON fanout_backlog (team_id, stream_seq, seq);
