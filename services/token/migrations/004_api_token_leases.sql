-- Until when a caller (the gateway) may still accept this token from its cache: Authenticate
-- extends it, RevokeToken waits for it to pass before returning.
ALTER TABLE api_tokens ADD COLUMN lease_until timestamptz;
