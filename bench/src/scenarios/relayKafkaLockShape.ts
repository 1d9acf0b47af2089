import { outboxHeaders } from '@ferry/core/transport';
import type { KafkaConnection } from '@ferry/kafka';
import type { Pool } from 'pg';
import { BATCH_SIZE, chunks } from '../env';
import { outboxMessages } from '../outbox';
import { timed, type Scenario } from '../runner';
import { handLoop, handMessages, openHandLoopSides, type Row } from './relayKafkaCeiling';

/**
 * A design probe, not ferry's code (issue 13): how fast could a fenced relay be if its claim
 * wrote nothing? Subject: two hand-written loops on node-postgres, each holding its claim as row
 * locks for the length of the send (`BEGIN`; `SELECT … FOR UPDATE SKIP LOCKED`, BATCH_SIZE due
 * rows; the raw kafkajs idempotent producer, acks -1; the rows marked SENT, or deleted under
 * BENCH_SENT=delete; `COMMIT`): one row write per event instead of two. No attempt counting, so a
 * record that crashes its relay would be claimed for ever (what the claim's write buys today).
 * Baseline (BENCH_LOCK_BASELINE): `claim` (default), `relay-kafka-ceiling`'s hand loop, which
 * writes the claim and then the completion; `raw`, `relay-kafka`'s baseline, the raw producer
 * sending the same messages encoded beforehand.
 */
export const relayKafkaLockShape: Scenario = {
  name: 'relay-kafka-lock-shape',
  unit: 'events/s',
  better: 'higher',
  baselineLabel:
    process.env.BENCH_LOCK_BASELINE === 'raw'
      ? 'kafkajs idempotent producer, sendBatch acks -1'
      : `hand-written pg relay loop (claim written), 2 in flight, batch ${BATCH_SIZE}`,
  subjectLabel: `hand-written pg relay loop (claim as row locks), 2 in flight, batch ${BATCH_SIZE}`,
  async open() {
    const { bench, topic, pool, raw, close } = await openHandLoopSides('lockshape');
    const remove = process.env.BENCH_SENT === 'delete';
    return {
      async baseline(n) {
        if (process.env.BENCH_LOCK_BASELINE === 'raw') {
          const sends = chunks(outboxMessages(n, topic), BATCH_SIZE).map((batch) => {
            const messages = batch.map((message) => ({
              key: message.orderingKey,
              value: Buffer.from(JSON.stringify(message.payload), 'utf8'),
              headers: outboxHeaders(message),
            }));
            return () => raw.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
          });
          return timed(async () => {
            for (const send of sends) await send();
            return { ops: n, verified: true };
          });
        }
        await bench.backlog(n, topic);
        const sample = await timed(async () => {
          const counts = await Promise.all([handLoop(pool, raw, topic), handLoop(pool, raw, topic)]);
          return { ops: counts[0]! + counts[1]!, verified: true };
        });
        return { ...sample, verified: sample.ops === n && (await bench.allSent(n)) };
      },
      async subject(n) {
        await bench.backlog(n, topic);
        const sample = await timed(async () => {
          const counts = await Promise.all([
            lockLoop(pool, raw, topic, remove),
            lockLoop(pool, raw, topic, remove),
          ]);
          return { ops: counts[0]! + counts[1]!, verified: true };
        });
        return {
          ...sample,
          verified: sample.ops === n && (await bench.allSent(n, remove ? 'delete' : 'keep')),
        };
      },
      close,
    };
  },
};

const LOCK = `
  SELECT id, event_type, payload, ordering_key, correlation_id, causation_id, tenant_id,
         traceparent, tracestate, headers, created_at
    FROM outbox_events
   WHERE status = 'PENDING' AND next_attempt_at <= now()
   ORDER BY next_attempt_at, seq LIMIT $1 FOR UPDATE SKIP LOCKED`;

const MARK_SENT = `
  UPDATE outbox_events SET status = 'SENT', published_at = now(), updated_at = now()
   WHERE id = ANY($1::uuid[])`;

const DELETE_SENT = 'DELETE FROM outbox_events WHERE id = ANY($1::uuid[])';

/** Locks, sends and completes batches in one transaction each until none is due; resolves the rows sent. */
async function lockLoop(
  pool: Pool,
  producer: ReturnType<KafkaConnection['kafka']['producer']>,
  topic: string,
  remove: boolean,
): Promise<number> {
  const client = await pool.connect();
  let sent = 0;
  try {
    for (;;) {
      await client.query('BEGIN');
      const { rows } = await client.query<Row>(LOCK, [BATCH_SIZE]);
      if (rows.length === 0) {
        await client.query('COMMIT');
        return sent;
      }
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: handMessages(rows, topic) }] });
      const done = await client.query(remove ? DELETE_SENT : MARK_SENT, [rows.map((row) => row.id)]);
      await client.query('COMMIT');
      sent += done.rowCount ?? 0;
    }
  } finally {
    client.release();
  }
}
