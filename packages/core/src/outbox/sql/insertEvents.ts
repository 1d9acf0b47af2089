import type { SqlExecutor } from '../../sql/executor';
import type { ValidEnvelope } from '../envelope/types';
import { statementRuns } from '../../sql/statementRuns';

/**
 * How many lock buckets ordering keys hash into: a transaction holds at most this many bucket
 * locks, however many keys it emits (half of max_locks_per_transaction's default 64, a
 * transaction's average share of PostgreSQL's shared lock table, leaving the rest to the
 * application).
 */
export const ORDERING_LOCK_BUCKETS = 32;

/**
 * How many keys a transaction locks one by one (each its own lock, besides its bucket's, shared)
 * before it locks whole buckets instead: at most ORDERING_LOCK_BUCKETS + this many locks.
 */
export const ORDERING_KEY_LOCKS = 8;

// Events sharing an ordering key are serialized per key for the rest of the transaction, so
// `seq` (insertion order) matches commit order across concurrent emitters of one key.
// A transaction's first ORDERING_KEY_LOCKS keys (counted in the transaction-local setting
// ferry.outbox_key_locks, reverted with a rolled-back savepoint as its locks are) each take the
// key's own lock (its 32-bit hash) exclusively and the key's bucket (hash modulo
// ORDERING_LOCK_BUCKETS) shared: emitters of different keys never wait for each other, so two
// transactions sharing no key cannot deadlock in whatever order they emit (review 87: with
// buckets alone, keys emitted one call at a time in opposite bucket orders did). Past that, a
// transaction takes the buckets of its keys exclusively, one lock per bucket however many keys
// (review 82: one lock per key failed a bulk emitMany of 20,000 keys "out of shared memory"):
// that waits for every emitter of the bucket, holding the key or the bucket. Either way two
// emitters of one key conflict (key and key, shared and exclusive bucket, bucket and bucket).
// A call takes its keys in ascending order, then its buckets in ascending order: two calls in any
// key order cannot deadlock, and a call waiting for a key holds none of its buckets yet (taken
// first, a shared bucket held while waiting for the key blocked a bulk transaction's exclusive
// one, which held the key: a deadlock). A transaction past ORDERING_KEY_LOCKS in separate calls
// can still deadlock with another emitter (PostgreSQL reports 40P01, a retriable
// FERRY_DATABASE_UNAVAILABLE). The two-int form, with ferry's own class ids, keeps these locks
// apart from an application's advisory locks, and the bucket lock is the one earlier versions
// took exclusively: emitters of both versions conflict.
const LOCK_KEYS = `
  WITH keys AS (
    SELECT DISTINCT hashtext(k) AS hash FROM unnest($1::text[]) AS k
  ), counted AS (
    SELECT coalesce(nullif(current_setting('ferry.outbox_key_locks', true), '')::int, 0)
      + (SELECT count(*)::int FROM keys) AS n
  ), one_by_one AS (
    SELECT n <= ${ORDERING_KEY_LOCKS} AS yes FROM counted
  ), locks AS (
    SELECT 1 AS step, bucket AS id FROM (SELECT DISTINCT abs(hash % ${ORDERING_LOCK_BUCKETS}) AS bucket FROM keys) b
    UNION ALL
    SELECT 0, hash FROM keys WHERE (SELECT yes FROM one_by_one)
    ORDER BY 1, 2
  )
  SELECT set_config('ferry.outbox_key_locks', (SELECT n FROM counted)::text, true) AS counted,
    (SELECT count(*) FROM (
      SELECT CASE
        WHEN l.step = 0 THEN pg_advisory_xact_lock(hashtext('ferry_outbox_key'), l.id)::text
        WHEN (SELECT yes FROM one_by_one) THEN pg_advisory_xact_lock_shared(hashtext('ferry_outbox'), l.id)::text
        ELSE pg_advisory_xact_lock(hashtext('ferry_outbox'), l.id)::text END
      FROM locks l) taken) AS locked`;

// The insert and the relay's wake-up in one statement (one round trip per emit without keys).
// pg_notify is cast to text: some drivers cannot read a void column. payload_bytes: the UTF-8 bytes
// of the payload's jsonb text, as validation measured them (ValidEnvelope.payloadBytes), which
// claims sum against maxBatchBytes without reading a payload (claimBytes.ts).
const INSERT_AND_NOTIFY = `
  WITH inserted AS (
    INSERT INTO outbox_events (id, event_type, payload, destination, ordering_key, tenant_id,
      correlation_id, causation_id, headers, traceparent, tracestate, max_retries, payload_bytes)
    SELECT v.id::uuid, v.type, v.payload::jsonb, v.destination, v.ordering_key, v.tenant_id,
      v.correlation_id, v.causation_id, v.headers::jsonb, v.traceparent, v.tracestate, v.max_retries,
      v.payload_bytes
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
      $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::int[])
      WITH ORDINALITY AS v(id, type, payload, destination, ordering_key, tenant_id, correlation_id,
        causation_id, headers, traceparent, tracestate, max_retries, payload_bytes, ord)
    ORDER BY v.ord
    RETURNING 1
  )
  SELECT pg_notify($14, '')::text AS woken FROM (SELECT 1 FROM inserted LIMIT 1) AS any_row`;

/**
 * Inserts validated envelopes in order and notifies `channel`, all inside `tx`: one statement
 * (after the key locks), or one per run of MAX_STATEMENT_TEXT_CHARS of payload and headers JSON
 * (statementRuns).
 */
export async function insertEvents(
  tx: SqlExecutor,
  envelopes: readonly ValidEnvelope[],
  channel: string,
): Promise<void> {
  const keys = envelopes.map((e) => e.orderingKey).filter((k): k is string => k !== null);
  if (keys.length > 0) await tx.execute(LOCK_KEYS, [keys]);
  const runs = statementRuns(envelopes, (e) => e.payloadJson.length + e.headersJson.length);
  for (const run of runs) await insertRun(tx, run, channel);
}

async function insertRun(
  tx: SqlExecutor,
  envelopes: readonly ValidEnvelope[],
  channel: string,
): Promise<void> {
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
    envelopes.map((e) => e.payloadBytes),
    channel,
  ]);
}
