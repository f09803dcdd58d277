-- Removing a delivery sets redelivery_of to NULL on its redeliveries; without this index every
-- removed row made PostgreSQL scan the whole table for them, which capped retention far below the
-- rate deliveries are written at.
CREATE INDEX deliveries_redeliveries ON deliveries (redelivery_of) WHERE redelivery_of IS NOT NULL;
