-- Each delivery of an issue event knows its issue and the event's place in the stream, so that the
-- deliveries of one issue to one webhook are attempted in the order the issue's changes were
-- committed (docs/webhook-delivery-controls.md), and the delivery log can be searched by issue.
-- issue_id: the event's issue (NULL for pings and deliveries made before this column existed).
-- stream_seq: the event's sequence number in ISSUE_EVENTS, the order it was committed in among the
-- events of its issue (NULL when unknown: such a delivery neither waits nor makes others wait).
-- out_of_order: the delivery went ahead while an earlier event of its issue to the same webhook
-- was still pending, because it had waited DELIVERY_ORDER_WAIT_MAX_MS.
ALTER TABLE deliveries ADD COLUMN issue_id bigint;
ALTER TABLE deliveries ADD COLUMN stream_seq bigint;
ALTER TABLE deliveries ADD COLUMN out_of_order boolean NOT NULL DEFAULT false;

-- "Is an earlier event of this issue still pending for this webhook?": one probe of this index.
CREATE INDEX deliveries_pending_by_issue ON deliveries (webhook_id, issue_id, stream_seq) WHERE status = 'pending' AND issue_id IS NOT NULL;

-- Events waiting in the fan-out backlog keep their issue for the deliveries they become.
ALTER TABLE fanout_backlog ADD COLUMN issue_id bigint;
