-- ferry outbox ordering: claim cost independent of how many rows a blocked key holds.
-- Unkeyed due rows, claimable without any ordering check.
CREATE INDEX outbox_events_due_unkeyed_idx ON outbox_events (next_attempt_at, seq)
  WHERE status = 'PENDING' AND ordering_key IS NULL;
-- Is any event of this key in flight? (a retried skipped head waits for its successor)
CREATE INDEX outbox_events_key_in_flight_idx ON outbox_events (ordering_key)
  WHERE status = 'PROCESSING' AND ordering_key IS NOT NULL;
