-- ferry inbox: one receipt per (scope, consumer, message id). Scope is 'tenant:<id>' for a
-- tenant message and 'global' for an intentional global one; it is derived from tenant_id so
-- the two can never disagree. Payload is NULL only after an explicit completed-payload purge;
-- the fingerprint stays, so redeliveries still deduplicate.
CREATE TABLE ferry_inbox_receipts (
  id                    uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id             text        NULL CHECK (tenant_id IS NULL OR length(tenant_id) > 0),
  scope                 text        GENERATED ALWAYS AS (
                                      CASE WHEN tenant_id IS NULL THEN 'global' ELSE 'tenant:' || tenant_id END
                                    ) STORED,
  consumer              text        NOT NULL CHECK (length(consumer) > 0),
  message_id            text        NOT NULL CHECK (length(message_id) > 0),
  message_type          text        NULL,
  payload               jsonb       NULL,
  payload_fingerprint   text        NOT NULL,
  payload_bytes         integer     NOT NULL CHECK (payload_bytes >= 0),
  headers               jsonb       NOT NULL DEFAULT '{}'::jsonb,
  status                text        NOT NULL DEFAULT 'PENDING'
                                    CHECK (status IN ('PENDING', 'PROCESSING', 'RETRYABLE', 'COMPLETED', 'DEAD')),
  attempts              integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  lifetime_attempts     integer     NOT NULL DEFAULT 0 CHECK (lifetime_attempts >= 0),
  max_attempts          integer     NOT NULL CHECK (max_attempts > 0),
  next_attempt_at       timestamptz NOT NULL DEFAULT now(),
  claim_token           uuid        NULL,
  lease_expires_at      timestamptz NULL,
  row_version           integer     NOT NULL DEFAULT 1,
  last_error            text        NULL,
  requeue_history       jsonb       NOT NULL DEFAULT '[]'::jsonb,
  replay_source_id      uuid        NULL,
  replay_source_version integer     NULL,
  replay_request_id     uuid        NULL,
  replay_actor          text        NULL,
  replay_reason         text        NULL,
  replay_requested_at   timestamptz NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  completed_at          timestamptz NULL,
  dead_at               timestamptz NULL,
  payload_purged_at     timestamptz NULL,
  CONSTRAINT ferry_inbox_receipts_identity UNIQUE (scope, consumer, message_id),
  CONSTRAINT ferry_inbox_receipts_processing_claimed
    CHECK (status <> 'PROCESSING' OR (claim_token IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CONSTRAINT ferry_inbox_receipts_payload_retained
    CHECK (payload IS NOT NULL OR status = 'COMPLETED'),
  CONSTRAINT ferry_inbox_receipts_replay_lineage
    CHECK ((replay_request_id IS NULL) = (replay_source_id IS NULL))
);

-- Claims: due PENDING / RETRYABLE work per consumer.
CREATE INDEX ferry_inbox_receipts_due
  ON ferry_inbox_receipts (consumer, next_attempt_at)
  WHERE status IN ('PENDING', 'RETRYABLE');

-- Recovery of abandoned claims (expired leases).
CREATE INDEX ferry_inbox_receipts_leases
  ON ferry_inbox_receipts (consumer, lease_expires_at)
  WHERE status = 'PROCESSING';

-- Admin paging within a scope, optionally by status.
CREATE INDEX ferry_inbox_receipts_admin
  ON ferry_inbox_receipts (scope, status, id);

-- Backlog statistics and approximate admission.
CREATE INDEX ferry_inbox_receipts_backlog
  ON ferry_inbox_receipts (created_at)
  WHERE status IN ('PENDING', 'RETRYABLE', 'PROCESSING');

-- Retention: completed rows whose payload is still stored.
CREATE INDEX ferry_inbox_receipts_retention
  ON ferry_inbox_receipts (scope, completed_at)
  WHERE status = 'COMPLETED' AND payload IS NOT NULL;

-- One replay per operator request id within the source scope.
CREATE UNIQUE INDEX ferry_inbox_receipts_replay_request
  ON ferry_inbox_receipts (scope, replay_request_id)
  WHERE replay_request_id IS NOT NULL;
