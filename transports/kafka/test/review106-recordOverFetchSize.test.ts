/**
 * review106: a record larger than the consumer's fetch limits (kafkajs's maxBytesPerPartition,
 * 1 MiB, and maxBytes, 10 MiB; @platformatic/kafka's maxBytes, 10 MiB) on a topic whose
 * `max.message.bytes` allows it. The broker answers a fetch with at least the first record batch
 * whatever its size (KIP-74), so the partition must move on: the record is dead-lettered (its
 * value over the inbox's limit), the record after it accepted, the partition committed.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ensureTopics } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { uniqueName, waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a 12 MiB record does not stall its partition', async () => {
  const topic = uniqueName('r106-over-fetch');
  harness.ownTopic(topic);
  harness.ownTopic(`${topic}.dlq`);
  await ensureTopics(harness.connection, [
    { topic, configs: { 'max.message.bytes': String(16 * 1024 * 1024) } },
    { topic: `${topic}.dlq` },
  ]);
  const big = JSON.stringify({ blob: 'x'.repeat(12 * 1024 * 1024) });
  await harness.raw.send({
    topic,
    messages: [
      { partition: 0, value: big, headers: { [FERRY_HEADERS.messageId]: 'big' } },
      { partition: 0, value: JSON.stringify({ n: 1 }), headers: { [FERRY_HEADERS.messageId]: 'after' } },
    ],
  });
  const { groupId, events } = await harness.start(topic, 'r106-over-fetch');
  let accepted: string[] = [];
  await waitFor(
    async () => {
      accepted = (await harness.acceptor.rows('r106-over-fetch')).map((row) => row.messageId);
      return accepted.length > 0;
    },
    () => `accepted ${JSON.stringify(accepted)}; events ${JSON.stringify(events.map((e) => e.type))}`,
    40_000,
  );
  await harness.waitFullyCommitted(groupId, topic);
  expect(accepted).toEqual(['after']);
  expect(events.filter((event) => event.type === 'dead-lettered').map((event) => event.reason)).toEqual([
    'payload_too_large',
  ]);
}, 90_000);
