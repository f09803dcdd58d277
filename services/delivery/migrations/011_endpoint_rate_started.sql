-- The second bucket of each per-endpoint rate limit: the attempts really started.
--
-- `tokens` (008) books sending times ahead for the deliveries a limit holds back; those times
-- conform to the limit, but a delivery is claimed when a sender gets to it, which may be after its
-- time (a busy replica, a full concurrency budget), and the next one may then be claimed on time,
-- less than 1/limit after it. `started_tokens` counts the claims themselves, at the moment of each
-- claim (PostgreSQL's clock, under the same row lock), whether the delivery had a booked time or
-- not: no claim starts more than it holds, so the deliveries started to an endpoint conform to its
-- bucket however late any of them is (docs/webhook-delivery-controls.md#rate-limit-per-endpoint).
-- Same size and refill as `tokens`: one second's worth when full, refilled at the limit.
ALTER TABLE endpoint_rate_limits
  ADD COLUMN started_tokens float8 NOT NULL DEFAULT 0,
  ADD COLUMN started_at timestamptz NOT NULL DEFAULT now();
