/**
 * Review 36 of db076e2 (a send of several records left unanswered is never charged; its records go
 * one at a time next time, `isolating`, each on its own deadline). Every silent outage now puts
 * the whole batch it met into `isolating`: when the cluster is back, the relay's next publish of
 * those rows is one send per record, each with a fresh confirmTimeoutMs, so the publish is
 * bounded by records x confirmTimeoutMs again, the very thing review 14 removed ("a slow cluster
 * never keeps a publish past the relay's lease", README). A cluster that answers, slowly (here
 * 0.7 s per answer, as in review14-chunkDeadlines; with the defaults, 500 rows x 0.6 s outlasts
 * lease.duration 300 s), after an outage: the publish outlasts lease.duration, the relay gives
 * up on the whole batch, discards the `sent` outcomes of the records already written, spends an
 * attempt on every row (or loses the claim) and publishes them again. Before db076e2 the batch
 * went back as one send (0.7 s) and nothing was charged: an outage followed by a slow recovery
 * charges healthy events, which go FAILED at maxRetries.
 */
import { createRelay, emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { outboxMessage, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(180_000);

const admin = testConnection();
const topic = uniqueName('review36-outage-isolating');
let database: TestDatabase;
let link: ShapedLink;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(admin, [{ topic, partitions: 1 }]);
  link = await ShapedLink.start({});
});

afterAll(async () => {
  await link.close();
  await deleteTopics(admin, [topic]);
  await database.drop();
});

test('after a silent outage, a slow cluster: the batch the outage met is sent without spending an attempt, its claim not lost', async () => {
  await emitMany(
    database.db,
    Array.from({ length: 8 }, (_, index) => ({ type: 'doc.stored', destination: topic, payload: { index } })),
  );
  const connection = link.connection('ferry-review36-isolating', { requestTimeoutMs: 4_000 });
  // The configuration of review14-chunkDeadlines: confirmTimeoutMs 3 s, lease 4 s (longer).
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 3_000 });
  const [warm] = await publisher.publish(
    [outboxMessage({ destination: topic })],
    new AbortController().signal,
  );
  expect(warm?.status).toBe('sent');
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: silentLogger,
    options: {
      lease: { duration: 4_000, heartbeatInterval: 1_000 },
      // The circuit stays closed: every cycle claims the whole batch.
      circuit: { failureThreshold: 1_000 },
    },
  });
  const rows = async () =>
    (
      await database.db.query<{ sent: number; unsent: number; attempts: number }>(
        `SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent,
                count(*) FILTER (WHERE status <> 'SENT')::int AS unsent,
                coalesce(sum(retry_count), 0)::int AS attempts FROM outbox_events`,
      )
    )[0]!;
  try {
    // A silent outage meets the batch: unanswered, released without spending an attempt.
    link.setSilent(true);
    const during = await relay.runOnce();
    expect({ claimed: during.claimed, unavailable: during.unavailable }).toEqual({
      claimed: 8,
      unavailable: 8,
    });
    expect((await rows()).attempts).toBe(0);
    // The network is back; the cluster answers every request, 0.7 s late.
    link.answerDelayMs = 700;
    link.setSilent(false);
    let lost = 0;
    for (let cycle = 0; cycle < 12 && (await rows()).unsent > 0; cycle += 1) {
      const result = await relay.runOnce();
      lost += result.lost;
      if (result.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // Now: the one-at-a-time sends (8 x 0.7 s) outlast the lease, every row is charged an attempt.
    expect({ ...(await rows()), lost }).toEqual({ sent: 8, unsent: 0, attempts: 0, lost: 0 });
  } finally {
    await relay.close();
    await publisher.close();
  }
});
