-- API tokens: only the SHA-256 of a value is kept; revoking deletes the row.
CREATE TABLE api_tokens (
  id bigserial PRIMARY KEY,
  team_id bigint NOT NULL,
  user_id bigint NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  token_hash text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  -- A token stops working when its owner leaves the team.
  FOREIGN KEY (team_id, user_id) REFERENCES memberships (team_id, user_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX api_tokens_token_hash_key ON api_tokens (token_hash);
CREATE INDEX api_tokens_team_id_idx ON api_tokens (team_id, id);
