/**
 * Events each well inside ferry's payload limit (256 KiB) and Kafka's per-record limit
 * (maxMessageBytes) whose batch is not: the relay's default batch of 500 such events is over
 * 100 MiB, more than a broker takes in one request (socket.request.max.bytes), and far more
 * than one partition's record batch may hold (message.max.bytes, 1 MiB by default). The
 * publisher sends such a batch in requests the broker takes, so it goes out whole: before, the
 * broker closed the connection on the one request, every event was reported `unavailable`, the
 * circuit opened as if the cluster were down, and the relay moved a handful of events per probe.
 * The relay's `maxBatchBytes` (64 MiB by default) now cuts such a claim at 312 events: raised here
 * so the one claim carries what the broker cannot take in one request.
 */
import { Pool } from 'pg';
import {
  createRelay,
  emitMany,
  fromPg,
  type OutboxEvent,
  type OutboxEventInput,
  type SqlExecutor,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { listened } from '../../../test-support/oneStatement';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { endOffsets, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(180_000);

const connection = testConnection();
const topic = uniqueName('large-events');
let database: TestDatabase;
// The events are written and relayed on node-postgres (fromPg), not the test database's Prisma
// client: Prisma's handling of 107 MB of rows was over a tenth of the file's CPU, and the
// executor is not what this file is about.
let pool: Pool;
let db: SqlExecutor;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = listened(new Pool({ connectionString: database.url, max: 2 }));
  db = fromPg(pool);
  await ensureTopics(connection, [{ topic, partitions: 2 }]);
});

afterAll(async () => {
  await deleteTopics(connection, [topic]);
  await pool.end();
  await database.drop();
});

async function unsent(): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
  );
  return row?.n ?? -1;
}

test('a batch of 500 events of 215 KB (107 MB) is SENT whole, without opening the circuit', async () => {
  const filler = 'x'.repeat(215_000);
  const events: OutboxEventInput[] = Array.from({ length: 500 }, (_, index) => ({
    type: 'document.stored',
    destination: topic,
    payload: { index, filler },
  }));
  for (let start = 0; start < events.length; start += 50) await emitMany(db, events.slice(start, start + 50));
  const seen: OutboxEvent['type'][] = [];
  const publisher = new KafkaPublisher(connection);
  const relay = createRelay({
    db,
    publisher,
    logger: silentLogger,
    observer: (event) => void seen.push(event.type),
    options: { maxBatchBytes: 128 * 1024 * 1024 },
  });
  try {
    const cycle = await relay.runOnce();
    expect({ claimed: cycle.claimed, sent: cycle.sent, unavailable: cycle.unavailable }).toEqual({
      claimed: 500,
      sent: 500,
      unavailable: 0,
    });
    expect(await unsent()).toBe(0);
    expect(seen).not.toContain('circuit-opened');
    const offsets = await endOffsets(connection, topic);
    expect([...offsets.values()].reduce((sum, offset) => sum + Number(offset), 0)).toBe(500);
  } finally {
    await relay.close();
    await publisher.close();
  }
});
