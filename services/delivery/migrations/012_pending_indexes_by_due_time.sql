-- The per-issue order is checked for every delivery a claim, a fan-out or a recorded attempt
-- touches: "is an earlier event of this issue to this webhook still pending?", answered by
-- deliveries_pending_by_issue in a few index pages. But every index on the pending deliveries
-- could answer it too, by reading all the pending rows of the webhook or the team, and when the
-- table's statistics were taken while little was pending (the usual case right after a quiet
-- period; on a large table a burst never moves them) the planner takes those indexes for empty,
-- and as cheap: a claim then read thousands of rows per delivery, most of a backlog's drain time
-- and PostgreSQL's CPU. The indexes that serve the due-time queries now hold only rows with a due
-- time (every pending row has one), which those queries always say and the per-issue check never
-- does, so only deliveries_pending_by_issue can answer it, whatever the statistics.
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
DROP INDEX deliveries_pending_by_team;
CREATE INDEX deliveries_pending_by_team ON deliveries (team_id, next_attempt_at) WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
DROP INDEX deliveries_pending_by_webhook;
CREATE INDEX deliveries_pending_by_webhook ON deliveries (webhook_id, next_attempt_at) WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
