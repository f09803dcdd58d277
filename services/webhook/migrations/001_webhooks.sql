-- Outbound webhook subscriptions of a team (teams are owned by the token service: no foreign key).
CREATE TABLE webhooks (
  id            bigserial PRIMARY KEY,
  team_id       bigint NOT NULL CHECK (team_id > 0),
  url           text NOT NULL CHECK (char_length(url) <= 2048 AND url ~* '^https://'),
  events        text[] NOT NULL CHECK (cardinality(events) >= 1 AND events <@ ARRAY['issue.created', 'issue.updated']),
  active        boolean NOT NULL DEFAULT true,
  -- The signing secret encrypted with AES-256-GCM (`wsb1.<key id>.<nonce>.<ciphertext>`, see
  -- packages/webhooks/src/secret-box.ts), never the secret itself; null when there is none.
  secret_sealed text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhooks_team_id_idx ON webhooks (team_id, id);
