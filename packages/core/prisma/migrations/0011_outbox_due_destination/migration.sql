-- ferry outbox: due PENDING rows per destination, for the half-open probe. While the broker
-- cannot take one destination (its publishes answer `unavailable`), the probe claims the oldest
-- due rows of the other destinations: one index probe per destination, so a backlog of the dead
-- destination, however long, is never walked (docs/outbox.md, Broker outages). The default
-- destination (NULL) is '' here, a name emit never gives. The key is the destination's first 512
-- characters (every destination emit writes is at most 512): an index entry holds at most about
-- 2,700 bytes, and a row inserted by SQL with a longer destination (which the relay FAILs alone)
-- must still be written, and must not stop this migration. PENDING is spelled as the statuses it
-- is not, as the probe spells it, so that only the probe's statement proves the predicate: with
-- `status = 'PENDING'`, as the due index's, and statistics from before a backlog (PENDING rows
-- rare), the planner read the probe's rows off the due index, walking the whole dead backlog.
-- The migrator runs each file in a transaction, where CREATE INDEX CONCURRENTLY is refused, so
-- this build holds a SHARE lock on outbox_events (emit waits) while it reads the table once. On a
-- large live table create it first without that lock:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_events_due_destination_idx
--     ON outbox_events ((left(coalesce(destination, ''), 512)), next_attempt_at, seq)
--     WHERE status NOT IN ('PROCESSING', 'SENT', 'FAILED');
-- and this migration then finds it and does nothing. A CONCURRENTLY build that did not finish
-- leaves an INVALID index of that name, which the planner never uses: this migration drops it and
-- builds it again.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index
             WHERE indexrelid = to_regclass('outbox_events_due_destination_idx') AND NOT indisvalid) THEN
    DROP INDEX outbox_events_due_destination_idx;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS outbox_events_due_destination_idx
  ON outbox_events ((left(coalesce(destination, ''), 512)), next_attempt_at, seq)
  WHERE status NOT IN ('PROCESSING', 'SENT', 'FAILED');
