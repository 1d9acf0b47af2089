-- The payload's size in bytes as emit measured it (the UTF-8 bytes of its JSON text, what
-- maxPayloadBytes bounds), written by emit: the relay's claims sum it against maxBatchBytes
-- without reading a payload. Null for events stored before this migration and for rows inserted
-- by SQL without emit: the claim counts those by their stored size (pg_column_size), which
-- under-counts a compressed payload. Nullable without a default: adding it rewrites nothing.
ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS payload_bytes integer;
