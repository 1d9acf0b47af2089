import { randomUUID } from 'node:crypto';
import { outboxHeaders } from '@ferry/core/transport';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '@ferry/kafka';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { BATCH_SIZE, SERVICES, uniqueName } from '../env';
import { OutboxBench } from '../outbox';
import { timed, type Scenario } from '../runner';
import { relayRun, type RelayBroker } from './relay';

/**
 * How close ferry's relay comes to what this machine allows: ferry (createRelay +
 * KafkaPublisher, as `relay-kafka`) against the smallest fenced relay one could write by hand on
 * the same table, database and topic: two loops on node-postgres, each claiming BATCH_SIZE due
 * rows (`FOR UPDATE SKIP LOCKED`, a claim token and lease), sending them with a raw kafkajs
 * idempotent producer (acks -1) and marking them SENT by id and token. No retries, no ordering
 * keys, no observer, no recovery: the cost of the outbox itself, which `relay-kafka`'s raw
 * producer baseline does not pay.
 */
export const relayKafkaCeiling: Scenario = {
  name: 'relay-kafka-ceiling',
  unit: 'events/s',
  better: 'higher',
  baselineLabel: `hand-written pg relay loop, 2 in flight, batch ${BATCH_SIZE}, raw kafkajs producer`,
  subjectLabel: 'createRelay + KafkaPublisher (client: kafkajs)',
  async open() {
    const sides = await openHandLoopSides('ceiling');
    const { bench, connection, topic, pool, raw } = sides;
    const publisher = new KafkaPublisher(connection);
    const close = async () => {
      await publisher.close().catch(() => undefined);
      await sides.close();
    };
    try {
      await publisher.connect();
    } catch (error) {
      await close();
      throw error;
    }
    const broker: RelayBroker = {
      destination: topic,
      publisher,
      prepare: () => async () => undefined,
      close,
    };
    return {
      async baseline(n) {
        await bench.backlog(n, topic);
        const sample = await timed(async () => {
          const counts = await Promise.all([handLoop(pool, raw, topic), handLoop(pool, raw, topic)]);
          return { ops: counts[0]! + counts[1]!, verified: true };
        });
        return { ...sample, verified: sample.ops === n && (await bench.allSent(n)) };
      },
      subject: (n) => relayRun(bench, broker, n),
      close,
    };
  },
};

/** What a hand-written loop runs on: a fresh outbox database, a pool of 4, a 3-partition topic, the raw producer. */
export interface HandLoopSides {
  readonly bench: OutboxBench;
  readonly connection: KafkaConnection;
  readonly topic: string;
  readonly pool: Pool;
  readonly raw: RawProducer;
  close(): Promise<void>;
}

/** Opens the hand-written loops' sides (what `close()` undoes, also when opening fails). */
export async function openHandLoopSides(prefix: string): Promise<HandLoopSides> {
  const bench = await OutboxBench.open();
  const connection = new KafkaConnection({
    brokers: [...SERVICES.kafkaBrokers],
    clientId: 'ferry-bench',
    kafkaLogLevel: 'nothing',
  });
  const topic = uniqueName(prefix);
  const pool = listened(new Pool({ connectionString: bench.database.url, max: 4 }));
  // The same producer settings as KafkaPublisher's, without ferry around it.
  const raw = connection.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const close = async () => {
    await Promise.allSettled([raw.disconnect(), pool.end()]);
    await deleteTopics(connection, [topic]).catch(() => undefined);
    await bench.close();
  };
  try {
    await ensureTopics(connection, [{ topic, partitions: 3 }]);
    await raw.connect();
  } catch (error) {
    await close();
    throw error;
  }
  return { bench, connection, topic, pool, raw, close };
}

export interface Row {
  id: string;
  event_type: string;
  payload: Record<string, unknown>;
  ordering_key: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  tenant_id: string | null;
  traceparent: string | null;
  tracestate: string | null;
  headers: Record<string, string>;
  created_at: Date;
}

const CLAIM = `
  UPDATE outbox_events SET status = 'PROCESSING', claim_token = $1, claimed_at = now(),
         lease_expires_at = now() + interval '30 seconds', claim_count = claim_count + 1
   WHERE id IN (SELECT id FROM outbox_events
                 WHERE status = 'PENDING' AND next_attempt_at <= now()
                 ORDER BY next_attempt_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED)
  RETURNING id, event_type, payload, ordering_key, correlation_id, causation_id, tenant_id,
            traceparent, tracestate, headers, created_at`;

const COMPLETE = `
  UPDATE outbox_events SET status = 'SENT', published_at = now(), claim_token = NULL,
         claimed_at = NULL, lease_expires_at = NULL, updated_at = now()
   WHERE id = ANY($1::uuid[]) AND claim_token = $2`;

type RawProducer = ReturnType<KafkaConnection['kafka']['producer']>;

/** The raw producer's messages for claimed rows, with the headers ferry's relay sends. */
export function handMessages(rows: readonly Row[], topic: string) {
  return rows.map((row) => ({
    key: row.ordering_key,
    value: Buffer.from(JSON.stringify(row.payload), 'utf8'),
    headers: outboxHeaders({
      id: row.id,
      type: row.event_type,
      payload: row.payload,
      destination: topic,
      orderingKey: row.ordering_key,
      tenantId: row.tenant_id,
      correlationId: row.correlation_id,
      causationId: row.causation_id,
      headers: row.headers,
      traceparent: row.traceparent,
      tracestate: row.tracestate,
      attempt: 1,
      createdAt: row.created_at,
    }),
  }));
}

/** Claims, sends and completes batches until the claim comes back empty; resolves the rows sent. */
export async function handLoop(pool: Pool, producer: RawProducer, topic: string): Promise<number> {
  let sent = 0;
  for (;;) {
    const token = randomUUID();
    const { rows } = await pool.query<Row>(CLAIM, [token, BATCH_SIZE]);
    if (rows.length === 0) return sent;
    await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: handMessages(rows, topic) }] });
    const done = await pool.query(COMPLETE, [rows.map((row) => row.id), token]);
    sent += done.rowCount ?? 0;
  }
}
