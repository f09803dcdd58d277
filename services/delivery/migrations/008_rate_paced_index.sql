-- The next sending time a rate limit gave a pending delivery, found by every claim so that senders
-- wake for it instead of waiting for their next poll. Only deliveries of limited endpoints are in it.
CREATE INDEX deliveries_rate_paced ON deliveries (next_attempt_at) WHERE status = 'pending' AND rate_paced;
