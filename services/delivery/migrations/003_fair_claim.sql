-- The fair claim finds the teams with pending deliveries by a skip scan of this index, then takes
-- each team's due deliveries oldest first from it, without reading other teams' backlogs.
CREATE INDEX deliveries_pending_by_team ON deliveries (team_id, next_attempt_at) WHERE status = 'pending';
-- Deferring an endpoint's deliveries (its circuit breaker opened) reads only that endpoint's pending rows.
CREATE INDEX deliveries_pending_by_webhook ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending';
