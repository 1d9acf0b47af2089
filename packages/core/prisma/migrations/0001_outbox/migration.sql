-- ferry outbox: events written in the application's transaction, published by the relay.
-- Status machine: PENDING -> PROCESSING (claimed with a token and a lease) -> SENT | PENDING (retry) | FAILED.
CREATE TABLE outbox_events (
  id               uuid        PRIMARY KEY,
  -- Insertion order: ordering keys publish in seq order; cursors break created_at ties on it.
  seq              bigint      GENERATED ALWAYS AS IDENTITY,
  event_type       text        NOT NULL,
  payload          jsonb       NOT NULL,
  destination      text,
  ordering_key     text,
  tenant_id        text,
  correlation_id   text,
  causation_id     text,
  headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
  traceparent      text,
  tracestate       text,
  status           text        NOT NULL DEFAULT 'PENDING',
  retry_count      integer     NOT NULL DEFAULT 0,
  max_retries      integer     NOT NULL,
  -- Lifetime number of claims; never reset (the poison guard reads it).
  claim_count      integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  claim_token      uuid,
  lease_expires_at timestamptz,
  claimed_at       timestamptz,
  last_error       text,
  published_at     timestamptz,
  failed_at        timestamptz,
  -- Set when a later event of the same ordering key was published past this FAILED one.
  skipped_at       timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT outbox_events_seq_key UNIQUE (seq),
  CONSTRAINT outbox_events_status_check CHECK (status IN ('PENDING', 'PROCESSING', 'SENT', 'FAILED')),
  CONSTRAINT outbox_events_claim_check CHECK (
    (status = 'PROCESSING') = (claim_token IS NOT NULL AND lease_expires_at IS NOT NULL AND claimed_at IS NOT NULL)
  ),
  CONSTRAINT outbox_events_sent_check CHECK ((status = 'SENT') = (published_at IS NOT NULL)),
  CONSTRAINT outbox_events_failed_check CHECK ((status = 'FAILED') = (failed_at IS NOT NULL)),
  CONSTRAINT outbox_events_counts_check CHECK (
    retry_count >= 0 AND max_retries >= 1 AND claim_count >= 0 AND retry_count <= max_retries
  ),
  CONSTRAINT outbox_events_type_check CHECK (length(event_type) BETWEEN 1 AND 255)
);

-- Claim: due PENDING rows in due order.
CREATE INDEX outbox_events_due_idx ON outbox_events (next_attempt_at, seq) WHERE status = 'PENDING';
-- Ordering: is there an earlier unfinished (or FAILED) event of the same key?
CREATE INDEX outbox_events_ordering_idx ON outbox_events (ordering_key, seq)
  WHERE ordering_key IS NOT NULL AND status IN ('PENDING', 'PROCESSING', 'FAILED');
-- Recovery of expired leases; heartbeat and completion by claim token.
CREATE INDEX outbox_events_lease_idx ON outbox_events (lease_expires_at) WHERE status = 'PROCESSING';
CREATE INDEX outbox_events_claim_token_idx ON outbox_events (claim_token) WHERE claim_token IS NOT NULL;
-- Admin list (newest first, cursor on created_at then seq), per tenant and overall.
CREATE INDEX outbox_events_created_idx ON outbox_events (created_at DESC, seq DESC);
CREATE INDEX outbox_events_tenant_created_idx ON outbox_events (tenant_id, created_at DESC, seq DESC)
  WHERE tenant_id IS NOT NULL;
-- Monitoring queries and FAILED admin views.
CREATE INDEX outbox_events_failed_idx ON outbox_events (event_type, created_at DESC) WHERE status = 'FAILED';
-- Retention: bounded purge of SENT rows by publish time.
CREATE INDEX outbox_events_sent_idx ON outbox_events (published_at) WHERE status = 'SENT';
