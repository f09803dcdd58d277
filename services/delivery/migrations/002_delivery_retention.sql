-- Finished deliveries are deleted after the retention period; a redelivery outlives its original.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_redelivery_of_fkey;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_redelivery_of_fkey FOREIGN KEY (redelivery_of) REFERENCES deliveries (id) ON DELETE SET NULL;
CREATE INDEX deliveries_finished ON deliveries (completed_at) WHERE status <> 'pending';
