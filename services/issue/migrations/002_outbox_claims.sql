-- A relay leases the rows it is publishing instead of holding a transaction open across the
-- publish: two statements per batch instead of four, and a relay that dies mid-publish only
-- delays its rows until the lease runs out.
ALTER TABLE outbox ADD COLUMN claimed_until timestamptz;
