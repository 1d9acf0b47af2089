-- ferry operator audit: one row per operator action taken through the admin API or the CLI
-- (retry, mark-failed, release, purge, requeue, replay), written in the same transaction as
-- the change it records. A dry run is recorded too (dry_run true), as is an action that failed
-- when ferry owned its transaction (outcome 'error', the FERRY code in results).
CREATE TABLE IF NOT EXISTS ferry_operator_audit (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  actor       text        NOT NULL CHECK (length(actor) > 0),
  action      text        NOT NULL CHECK (length(action) > 0),
  -- 'operator' (outbox, every tenant), 'tenant:<id>' or 'global'
  scope       text        NOT NULL,
  reason      text        NULL,
  ids         text[]      NOT NULL DEFAULT '{}',
  -- 'applied' (every id applied), 'partial', 'none', or 'error'
  outcome     text        NOT NULL,
  -- per-id outcomes, counts, or the error code and message
  results     jsonb       NOT NULL DEFAULT '{}'::jsonb,
  -- the filter or arguments the action was given (before, claim token, force ...)
  arguments   jsonb       NOT NULL DEFAULT '{}'::jsonb,
  dry_run     boolean     NOT NULL DEFAULT false
);

CREATE INDEX IF NOT EXISTS ferry_operator_audit_at_idx ON ferry_operator_audit (at DESC, id DESC);
CREATE INDEX IF NOT EXISTS ferry_operator_audit_scope_idx ON ferry_operator_audit (scope, at DESC);
