-- Every change that can make a gateway's cached answer about a token wrong: the token deleted
-- (revoked, or gone with its owner's membership, user or team) or moved to another team, user or
-- value. Written by triggers, so no path that changes api_tokens can forget it. The gateways read
-- this feed (TokenService.ListTokenChanges) and drop what they cached about each token listed.
CREATE TABLE api_token_changes (
  seq bigserial PRIMARY KEY,
  token_id bigint NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_token_changes_changed_at_idx ON api_token_changes (changed_at);

-- Transactions that change tokens take this lock before touching a row and hold it until they
-- commit, so they take their seq numbers in commit order: a reader that has seen seq N has seen
-- every change numbered below N, and a cursor never skips a change committed late.
CREATE FUNCTION api_token_changes_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(TG_TABLE_SCHEMA || '.api_token_changes'));
  RETURN NULL;
END
$$;

CREATE FUNCTION api_token_changes_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %I.api_token_changes (token_id) VALUES ($1)', TG_TABLE_SCHEMA) USING OLD.id;
  RETURN NULL;
END
$$;

-- Only the columns that make up a token's identity: the lease and last-use bookkeeping does not count.
CREATE TRIGGER api_tokens_changes_lock BEFORE DELETE OR UPDATE OF id, team_id, user_id, token_hash ON api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION api_token_changes_lock();
CREATE TRIGGER api_tokens_changes_record AFTER DELETE OR UPDATE OF id, team_id, user_id, token_hash ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION api_token_changes_record();

-- One row: until when (database clock) a gateway may still accept tokens from its cache on the
-- strength of the last feed answer it got. ListTokenChanges extends it; RevokeToken waits for it
-- to pass, so once a revocation returns, no gateway accepts the token from a cache any more.
CREATE TABLE api_token_feed (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  lease_until timestamptz NOT NULL DEFAULT 'epoch',
  -- The highest seq the retention has deleted: a reader whose cursor is not past it may have
  -- missed changes, and is told to forget everything it cached.
  pruned_through bigint NOT NULL DEFAULT 0
);
INSERT INTO api_token_feed DEFAULT VALUES;
