-- What a team sets on an endpoint besides its URL and events, and what Worklane records about it.
ALTER TABLE webhooks
  ADD COLUMN description text CHECK (char_length(description) BETWEEN 1 AND 1024),
  -- The scope: only events of these organizations / projects; empty means every one.
  ADD COLUMN organization_ids bigint[] NOT NULL DEFAULT '{}' CHECK (cardinality(organization_ids) <= 100),
  ADD COLUMN project_ids bigint[] NOT NULL DEFAULT '{}' CHECK (cardinality(project_ids) <= 100),
  ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second >= 1),
  -- Events about the team's webhooks this one receives; `events` keeps the issue events only.
  ADD COLUMN operational_events text[] NOT NULL DEFAULT '{}' CHECK (operational_events <@ ARRAY['webhook.failing', 'webhook.disabled']),
  -- Set when the delivery service switches a failing endpoint off; cleared when the team activates it.
  ADD COLUMN disabled_reason text CHECK (char_length(disabled_reason) BETWEEN 1 AND 500),
  ADD COLUMN disabled_at timestamptz,
  -- The ed25519 seed sealed like the secret (another context), and its public key (`whpk_...`).
  ADD COLUMN ed25519_key_sealed text,
  ADD COLUMN ed25519_public_key text,
  ADD COLUMN secret_rotated_at timestamptz,
  ADD CONSTRAINT webhooks_ed25519_pair CHECK ((ed25519_key_sealed IS NULL) = (ed25519_public_key IS NULL)),
  ADD CONSTRAINT webhooks_disabled_pair CHECK ((disabled_reason IS NULL) = (disabled_at IS NULL));

-- Secrets replaced by a rotation: each keeps signing (webhook-signature) until expires_at. Sealed
-- like the current secret; expired rows sign nothing and are deleted by the next rotation.
CREATE TABLE webhook_previous_secrets (
  id            bigserial PRIMARY KEY,
  webhook_id    bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  secret_sealed text NOT NULL,
  expires_at    timestamptz NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_previous_secrets_by_webhook ON webhook_previous_secrets (webhook_id, expires_at);
