/**
 * Review finding (failed first), review 16 of f0b774c (all three passed on f0b774c^): after a failed send, a cluster that goes
 * silent makes the next publish wait far past its confirmTimeoutMs, and in a relay spend an attempt.
 *
 * A record the topic refuses (MESSAGE_TOO_LARGE) fails its send, so SequencedSends retires the
 * producer and starts the replacement at once; the cluster then goes silent (a paused broker: TCP
 * connections accepted, nothing answered). The next publish waits for the replacement
 * (KafkaPublisher.producerReady) with no deadline before its confirmTimeoutMs even starts: only
 * the client's requestTimeoutMs (30 s by default, 8 s here) ends the replacement's connect
 * (ApiVersions unanswered), both clients. Before f0b774c the replacement was charged to the
 * send's deadline and the publish was `unavailable` after confirmTimeoutMs (2 s), as the README
 * promises ("a silent cluster costs a publish confirmTimeoutMs"). It matters: a relay whose lease
 * is longer than confirmTimeoutMs (4 s here, the setup review14-chunkDeadlines calls sound) gives
 * up on the batch at lease.duration and spends an attempt on every row ("publisher did not
 * answer within lease.duration"), where a silent cluster cost none before; the relay's cycle and
 * circuit are held requestTimeoutMs instead of confirmTimeoutMs.
 */
import { createRelay, emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { ShapedLink } from './shapedLink';
import { outboxMessage, silentLogger, testConnection, uniqueName } from './support';

jest.setTimeout(120_000);

const admin = testConnection();
const topic = uniqueName('review16-silent-replacement');
let link: ShapedLink;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(admin, [{ topic, partitions: 1, configs: { 'max.message.bytes': '2000' } }]);
});

afterAll(async () => {
  await deleteTopics(admin, [topic]);
  await database.drop();
});

test.each(['kafkajs', 'platformatic'] as const)(
  '%s: a publish after a refused record, the cluster then silent, settles within its confirmTimeoutMs (unavailable)',
  async (client) => {
    const confirmTimeoutMs = 2_000;
    link = await ShapedLink.start({});
    const publisher = new KafkaPublisher(
      link.connection(`ferry-review16-silent-${client}`, { requestTimeoutMs: 8_000, client }),
      {
        confirmTimeoutMs,
      },
    );
    try {
      const first = outboxMessage({ destination: topic, payload: { n: 0 } });
      expect((await publisher.publish([first], new AbortController().signal))[0]!.status).toBe('sent');

      link.silenceFromNextConnection();
      const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
      expect((await publisher.publish([refused], new AbortController().signal))[0]!.status).toBe('permanent');

      const next = outboxMessage({ destination: topic, payload: { n: 1 } });
      const [outcome] = await publisher.publish([next], new AbortController().signal);
      expect(link.silent).toBe(true);
      // Ended by ferry's bound on the replacement (confirmTimeoutMs), not by the client's request
      // timeout (8 s) followed by the send's own deadline, as on f0b774c (after 8.1 s and 10.0 s).
      expect(outcome).toMatchObject({
        status: 'unavailable',
        error: expect.stringMatching(/replaces one whose send failed did not connect within 2000 ms/),
      });
    } finally {
      await publisher.close();
      await link.close();
    }
  },
);

// In a relay, the publish now outlasts a lease longer than confirmTimeoutMs (the setup
// review14-chunkDeadlines calls sound): the relay gives up on the batch at lease.duration and
// spends an attempt on every row, where the cluster's silence cost none before (`unavailable`).
test('kafkajs, in a relay: an event published after a refused record, the cluster then silent, spends no attempt', async () => {
  link = await ShapedLink.start({});
  const publisher = new KafkaPublisher(
    link.connection('ferry-review16-silent-relay', { requestTimeoutMs: 8_000 }),
    {
      confirmTimeoutMs: 2_000,
    },
  );
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: silentLogger,
    options: { lease: { duration: 4_000, heartbeatInterval: 1_000 } },
  });
  try {
    const first = outboxMessage({ destination: topic, payload: { n: 0 } });
    expect((await publisher.publish([first], new AbortController().signal))[0]!.status).toBe('sent');
    link.silenceFromNextConnection();
    const refused = outboxMessage({ destination: topic, payload: { filler: 'x'.repeat(5_000) } });
    expect((await publisher.publish([refused], new AbortController().signal))[0]!.status).toBe('permanent');

    await emitMany(database.db, [{ type: 'doc.stored', destination: topic, payload: { n: 1 } }]);
    await relay.runOnce();
    const [row] = await database.db.query<{ status: string; attempts: number; error: string | null }>(
      `SELECT status, retry_count::int AS attempts, last_error AS error FROM outbox_events`,
    );
    expect(link.silent).toBe(true);
    // Before f0b774c: PENDING, 0 attempts (unavailable after confirmTimeoutMs).
    expect(row).toEqual({ status: 'PENDING', attempts: 0, error: expect.not.stringMatching(/lease/) });
  } finally {
    await relay.close();
    await publisher.close();
    await link.close();
  }
});
