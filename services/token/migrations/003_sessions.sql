-- Console sessions: the cookie carries a secret whose SHA-256 is the key here.
CREATE TABLE sessions (
  id bigserial PRIMARY KEY,
  secret_hash text NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  -- Fixed at creation: no amount of activity keeps a session alive past it.
  absolute_expires_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sessions_secret_hash_key ON sessions (secret_hash);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_absolute_expires_at_idx ON sessions (absolute_expires_at);
