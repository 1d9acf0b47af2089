-- Stats count DEAD receipts exactly without reading the COMPLETED history. DEAD is set rarely (a
-- permanent failure, exhausted attempts), so no claim or completion writes an entry here.
-- The migrator runs each file in a transaction, where CREATE INDEX CONCURRENTLY is refused, so
-- this build holds a SHARE lock on ferry_inbox_receipts (acceptance waits) while it reads the
-- table once. On a large live table create it first without that lock:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS ferry_inbox_receipts_dead
--     ON ferry_inbox_receipts (consumer, created_at) WHERE status = 'DEAD';
-- and this migration then finds it and does nothing. A CONCURRENTLY build that did not finish
-- (cancelled, timed out) leaves an INVALID index of that name, which the planner never uses:
-- this migration drops it and builds it again.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index
             WHERE indexrelid = to_regclass('ferry_inbox_receipts_dead') AND NOT indisvalid) THEN
    DROP INDEX ferry_inbox_receipts_dead;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS ferry_inbox_receipts_dead
  ON ferry_inbox_receipts (consumer, created_at)
  WHERE status = 'DEAD';
