import type { SqlExecutor } from '../../sql/executor';
import type { ValidEnvelope } from '../envelope/types';

/**
 * How many lock buckets ordering keys hash into: at most this many advisory locks per transaction,
 * however many keys it emits (half of max_locks_per_transaction's default 64, a transaction's
 * average share of PostgreSQL's shared lock table, leaving the rest to the application).
 */
export const ORDERING_LOCK_BUCKETS = 32;

// Events sharing an ordering key are serialized per key for the rest of the transaction, so
// `seq` (insertion order) matches commit order across concurrent emitters of one key. The lock
// is the key's bucket (its hash modulo ORDERING_LOCK_BUCKETS), not the key: one lock per key
// took a lock table entry per distinct key until commit, so a bulk emitMany of 20,000 keys failed
// "out of shared memory" (retriable, yet failing every retry) and a transaction holding ~12,800
// made other sessions' plain INSERTs fail. Emitters of one key still share a lock (the same
// bucket); two emitters of different keys in one bucket also wait for each other, which costs
// only a wait, never order. The two-int form, with ferry's own class id, keeps the buckets apart
// from an application's advisory locks.
// Buckets are taken in ascending order: two emitMany calls in any key order cannot deadlock.
// Separate emit calls in one transaction lock in call order; an application that emits keys
// one call at a time in opposite bucket orders in two transactions can deadlock (PostgreSQL
// reports 40P01, a retriable FERRY_DATABASE_UNAVAILABLE).
const LOCK_KEYS = `
  SELECT pg_advisory_xact_lock(hashtext('ferry_outbox'), bucket)
  FROM (SELECT DISTINCT abs(hashtext(k) % ${ORDERING_LOCK_BUCKETS}) AS bucket
        FROM unnest($1::text[]) AS k ORDER BY 1) locks`;

// The insert and the relay's wake-up in one statement (one round trip per emit without keys).
// pg_notify is cast to text: some drivers cannot read a void column.
const INSERT_AND_NOTIFY = `
  WITH inserted AS (
    INSERT INTO outbox_events (id, event_type, payload, destination, ordering_key, tenant_id,
      correlation_id, causation_id, headers, traceparent, tracestate, max_retries)
    SELECT v.id::uuid, v.type, v.payload::jsonb, v.destination, v.ordering_key, v.tenant_id,
      v.correlation_id, v.causation_id, v.headers::jsonb, v.traceparent, v.tracestate, v.max_retries
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[], $10::text[], $11::text[], $12::int[])
      WITH ORDINALITY AS v(id, type, payload, destination, ordering_key, tenant_id, correlation_id,
        causation_id, headers, traceparent, tracestate, max_retries, ord)
    ORDER BY v.ord
    RETURNING 1
  )
  SELECT pg_notify($13, '')::text AS woken FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row`;

/** Inserts validated envelopes in order and notifies `channel`, all inside `tx`. */
export async function insertEvents(
  tx: SqlExecutor,
  envelopes: readonly ValidEnvelope[],
  channel: string,
): Promise<void> {
  const keys = envelopes.map((e) => e.orderingKey).filter((k): k is string => k !== null);
  if (keys.length > 0) await tx.execute(LOCK_KEYS, [keys]);
  await tx.query(INSERT_AND_NOTIFY, [
    envelopes.map((e) => e.id),
    envelopes.map((e) => e.type),
    envelopes.map((e) => e.payloadJson),
    envelopes.map((e) => e.destination),
    envelopes.map((e) => e.orderingKey),
    envelopes.map((e) => e.tenantId),
    envelopes.map((e) => e.correlationId),
    envelopes.map((e) => e.causationId),
    envelopes.map((e) => e.headersJson),
    envelopes.map((e) => e.traceparent),
    envelopes.map((e) => e.tracestate),
    envelopes.map((e) => e.maxRetries),
    channel,
  ]);
}
