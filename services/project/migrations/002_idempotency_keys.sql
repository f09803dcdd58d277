-- POSTs made with an Idempotency-Key (docs/api-idempotency.md). A row is taken by the first
-- request with the key (lease_token, locked_until) and completed with its answer in the
-- transaction of its work; a retry with the same key and request gets that answer again until
-- expires_at, after which the retention worker deletes the row. Keys of different teams or
-- operations never meet.
CREATE TABLE idempotency_keys (
  team_id bigint NOT NULL,
  operation text NOT NULL,
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  fingerprint bytea NOT NULL,
  path text NOT NULL,
  lease_token uuid,
  locked_until timestamptz,
  response_status smallint,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (team_id, operation, key)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
