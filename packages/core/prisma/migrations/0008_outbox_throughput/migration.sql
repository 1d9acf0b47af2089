-- ferry outbox throughput: fewer index entries written per event.
-- Every claim wrote an entry here and nothing needs it any more: the relay renews its lease by
-- primary key (the claimed ids) and completes by primary key; an operator's release by claim
-- token reads the few PROCESSING rows through outbox_events_lease_idx.
DROP INDEX IF EXISTS outbox_events_claim_token_idx;
