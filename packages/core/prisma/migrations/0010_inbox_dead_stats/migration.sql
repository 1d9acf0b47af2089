-- Stats count DEAD receipts exactly without reading the COMPLETED history. DEAD is set rarely (a
-- permanent failure, exhausted attempts), so no claim or completion writes an entry here.
-- The migrator runs each file in a transaction, where CREATE INDEX CONCURRENTLY is refused, so
-- this build holds a SHARE lock on ferry_inbox_receipts (acceptance waits) while it reads the
-- table once. On a large live table create it first without that lock:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS ferry_inbox_receipts_dead
--     ON ferry_inbox_receipts (consumer, created_at) WHERE status = 'DEAD';
-- and this migration then finds it and does nothing.
CREATE INDEX IF NOT EXISTS ferry_inbox_receipts_dead
  ON ferry_inbox_receipts (consumer, created_at)
  WHERE status = 'DEAD';
