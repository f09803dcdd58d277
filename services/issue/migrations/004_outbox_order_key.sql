-- The events of one issue must leave in the order they were committed, whichever relay replica
-- publishes them. Each outbox row carries its issue as `order_key`, read from the payload when
-- the row is written (the envelope starts `{"id":...,"issue":{"id":<n>,`), so that a relay never
-- claims a later event of an issue while another relay holds an earlier one.
ALTER TABLE outbox ADD COLUMN order_key text;

CREATE FUNCTION outbox_order_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.order_key := substring(NEW.payload from '"issue":\{"id":([0-9]+)');
  RETURN NEW;
END
$$;

CREATE TRIGGER outbox_order_key BEFORE INSERT OR UPDATE OF payload ON outbox
  FOR EACH ROW EXECUTE FUNCTION outbox_order_key();

UPDATE outbox SET order_key = substring(payload from '"issue":\{"id":([0-9]+)') WHERE published_at IS NULL;
