-- Per-endpoint rate limits (a webhook's rate_limit_per_second), shared by every delivery replica:
-- a token bucket per limited webhook, which the claim reads and spends under a row lock, so two
-- replicas never spend the same tokens. `tokens` may go below zero: deliveries that found the
-- bucket empty are given the next free sending times ahead (rate_paced below) and owe them.
-- The delivery service writes a row when it learns of a webhook's limit from the webhook service
-- and deletes it when the limit is removed.
CREATE TABLE endpoint_rate_limits (
  webhook_id bigint PRIMARY KEY,
  team_id bigint NOT NULL,
  per_second integer NOT NULL CHECK (per_second >= 1),
  tokens float8 NOT NULL,
  refilled_at timestamptz NOT NULL DEFAULT now()
);

-- The claim reads the limits of the teams it serves.
CREATE INDEX endpoint_rate_limits_by_team ON endpoint_rate_limits (team_id);

-- A pending delivery whose next attempt time is a sending time its endpoint's rate limit gave it:
-- it goes when due without spending a token again. Cleared by every attempt, so a retry waits
-- for a token like any other delivery.
ALTER TABLE deliveries ADD COLUMN rate_paced boolean NOT NULL DEFAULT false;
