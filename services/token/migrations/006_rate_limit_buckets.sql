-- The API rate-limit buckets every gateway replica shares (TokenService.SyncRateLimits): one row
-- per token or team that made requests lately. Soft state, hence UNLOGGED (no WAL, emptied after a
-- crash, not on standbys): losing it only gives every key a full allowance again. A row whose
-- bucket has refilled is deleted by the token service's sweep, so the table holds the active keys.
CREATE UNLOGGED TABLE rate_limit_buckets (
  -- 1: an API token, 2: a team (RateLimitScope).
  scope smallint NOT NULL,
  key bigint NOT NULL,
  -- The allowance as the last gateway to sync it is configured.
  per_second double precision NOT NULL,
  burst double precision NOT NULL,
  -- Units left at updated_at; below zero is a debt (at least -burst).
  level double precision NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
