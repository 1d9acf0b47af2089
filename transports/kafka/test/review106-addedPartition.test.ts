/**
 * review106: a partition added to a consumed topic while the consumer runs.
 *
 * What I did: a one-partition topic, a consumer of it that joined and accepted a record of
 * partition 0, then `createPartitions` to two and a record produced to the new partition 1.
 *
 * What happened (@platformatic/kafka): the record of partition 1 was never accepted. The client
 * assigns partitions at the group's join only and nothing in it rejoins when a subscribed
 * topic's partition count grows, so with one long-running member the new partition stayed
 * unread for as long as it ran (until another member joined or left). kafkajs rejoins once its
 * metadata is older than `metadataMaxAge` (5 minutes by default, which ferry kept): every record
 * produced to the new partition waited up to 5 minutes.
 *
 * What should happen: like the Java client's leader, the consumer notices the new partition
 * within the consumer's `metadataMaxAgeMs` and rejoins, so the partition is assigned and read.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from './consumerHarness';
import { waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

describe('review106: a partition added while consuming', () => {
  test('the new partition is assigned and its records accepted', async () => {
    const topic = await harness.topicPair('r106-added-partition');
    const record = (id: string, partition: number) => ({
      partition,
      value: JSON.stringify({ id }),
      headers: { [FERRY_HEADERS.messageId]: id },
    });
    await harness.raw.send({ topic, messages: [record('p0-first', 0)] });
    const { groupId, events } = await harness.start(topic, 'r106-added', { metadataMaxAgeMs: 1000 });
    let accepted: string[] = [];
    const rows = async () => {
      accepted = (await harness.acceptor.rows('r106-added')).map((row) => row.messageId).sort();
      return accepted;
    };
    await waitFor(
      async () => (await rows()).length === 1,
      () => 'p0-first not accepted',
      30_000,
    );

    const admin = harness.connection.kafka.admin();
    await admin.connect();
    try {
      await admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] });
    } finally {
      await admin.disconnect();
    }
    // A producer that knows the new partition: kafkajs's producer drops a record for a partition
    // its metadata lacks, and reports it sent.
    const producer = harness.connection.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      const sent = await producer.send({ topic, messages: [record('p1-first', 1), record('p0-second', 0)] });
      expect(sent.map((entry) => entry.partition).sort()).toEqual([0, 1]);
    } finally {
      await producer.disconnect();
    }

    await waitFor(
      async () => (await rows()).length === 3,
      () =>
        `accepted ${JSON.stringify(accepted)}; assignments ${JSON.stringify(
          events.filter((event) => event.type === 'connected').map((event) => event.assignment),
        )}`,
      40_000,
    );
    expect(await rows()).toEqual(['p0-first', 'p0-second', 'p1-first']);
    await harness.waitFullyCommitted(groupId, topic);
  }, 120_000);
});
