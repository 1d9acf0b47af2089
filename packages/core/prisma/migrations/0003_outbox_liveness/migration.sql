-- Poison guard: count only claims that ended in lease expiry, consecutively. Recovery
-- increments it; a fenced completion (SENT, retry scheduled, FAILED) and an operator retry
-- reset it. claim_count stays the lifetime claim counter.
ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS expired_claims integer NOT NULL DEFAULT 0;
ALTER TABLE outbox_events DROP CONSTRAINT IF EXISTS outbox_events_expired_claims_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_expired_claims_check CHECK (expired_claims >= 0);
