-- Events the relay could never publish (larger than the bus accepts, malformed), moved out of the
-- outbox with the reason so that the events behind them go on. The outbox row itself is replaced
-- by a small dead-letter notice, published in the event's place, which the delivery service
-- records in the team's delivery log.
CREATE TABLE outbox_dead_letters (
  id uuid PRIMARY KEY,
  subject text NOT NULL,
  payload text NOT NULL,
  trace_context jsonb,
  team_id bigint,
  reason text NOT NULL,
  detail text NOT NULL,
  created_at timestamptz NOT NULL,
  dead_lettered_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX outbox_dead_letters_by_age ON outbox_dead_letters (dead_lettered_at);
