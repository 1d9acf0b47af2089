import { AUDIT_TABLE } from '../audit/sql';
import { REQUIRED_COLUMNS, TABLE as INBOX_TABLE } from '../inbox/sql/fragments';

/** Columns a component needs, by table: e.g. `{ outbox_events: ['id', 'status'] }`. */
export type RequiredTables = Readonly<Record<string, readonly string[]>>;

/** The columns of outbox_events the relay, emit and the admins read and write (relay.verify()). */
export const OUTBOX_COLUMNS: readonly string[] = [
  'id',
  'seq',
  'event_type',
  'payload',
  'destination',
  'ordering_key',
  'tenant_id',
  'correlation_id',
  'causation_id',
  'headers',
  'traceparent',
  'tracestate',
  'status',
  'retry_count',
  'max_retries',
  'claim_count',
  'next_attempt_at',
  'claim_token',
  'lease_expires_at',
  'claimed_at',
  'last_error',
  'published_at',
  'failed_at',
  'skipped_at',
  'created_at',
  'updated_at',
  'expired_claims',
  'payload_bytes',
];

/**
 * The tables ferry's own migrations create and the columns ferry reads and writes in them: what
 * checkSchema() requires besides the migration ledger when it checks ferry's folder (`ferry check`,
 * `ferry health`, readiness). A ledger that records every migration says nothing of a table
 * renamed, dropped or left out of a restore afterwards (review 112: the check said "ready" while
 * every operator command failed with FERRY_SCHEMA_NOT_READY and `ferry migrate` had nothing to do).
 */
export const FERRY_TABLES: RequiredTables = {
  outbox_events: OUTBOX_COLUMNS,
  [INBOX_TABLE]: REQUIRED_COLUMNS,
  [AUDIT_TABLE]: [
    'id',
    'at',
    'actor',
    'action',
    'scope',
    'reason',
    'ids',
    'outcome',
    'results',
    'arguments',
    'dry_run',
  ],
};
