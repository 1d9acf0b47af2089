/**
 * Review 95 (the publishers' answerWithinMs, review 93): the relay gives up on a publish() itself,
 * and charges the batch (`retryable`, an attempt spent), only past the publisher's declared
 * answerWithinMs and a second, trusting it to be the longest publish() takes by the publisher's
 * own deadlines (core's Publisher contract). The Kafka publisher declares 2 x confirmTimeoutMs +
 * connectionTimeoutMs, but after a batch the cluster refused it sends the records one at a time
 * (sendOneByOne), each with its own wait for the replaced producer and its own confirmTimeoutMs:
 * on a slow cluster (each answer 300 ms late, review 15's link) that answers each send in time,
 * the publish lasts one send per record (31 records here), and the relay gave up on it and charged every event of
 * the batch, those the cluster had taken included ("did not answer within its answerWithinMs").
 */
import { createRelay, emitMany } from '@ferry/core';
import pino from 'pino';
import { createTestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review95-answer-within');
let link: ShapedLink;

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '2000' } }]);
  link = await ShapedLink.start({ answerDelayMs: 300 });
});

afterAll(async () => {
  await link.close();
  await deleteTopics(admin, [topic]);
});

test('a refused record among healthy ones on a slow cluster: the publish answers within its answerWithinMs, the relay charges nothing for it', async () => {
  const connection = link.connection('ferry-review95-answer-within');
  const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 2_000 });
  const database = await createTestDatabase();
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: { lease: { duration: 2_000 }, circuit: { failureThreshold: 1_000 } },
  });
  try {
    const event = (payload: Record<string, unknown>) => ({
      type: 'doc.stored',
      destination: topic,
      payload,
      maxRetries: 5,
    });
    const { ids } = await emitMany(database.db, [
      ...Array.from({ length: 20 }, (_, n) => event({ n })),
      event({ filler: 'x'.repeat(5_000) }),
      ...Array.from({ length: 10 }, (_, n) => event({ n: 20 + n })),
    ]);
    await relay.runOnce();
    const rows = await database.db.query<{ status: string; last_error: string | null }>(
      'SELECT status, last_error FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [ids],
    );
    // Before: every event charged by the relay ("publisher did not answer within its
    // answerWithinMs and a margin (8000 ms)"), the ones the cluster took included.
    expect(rows.filter((row) => /did not answer within/.test(row.last_error ?? ''))).toEqual([]);
  } finally {
    await relay.close();
    await publisher.close();
    await database.drop();
  }
});
