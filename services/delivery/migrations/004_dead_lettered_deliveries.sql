-- An event the issue service could never publish (larger than the bus accepts, malformed) reaches
-- the delivery service as a dead-letter notice; each webhook that would have received it gets a
-- finished delivery with failure_reason 'dead_lettered', so the team sees the loss in its log.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_failure_reason_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_failure_reason_check
  CHECK (failure_reason IN ('gone', 'exhausted', 'webhook_deleted', 'webhook_inactive', 'dead_lettered'));
