/**
 * A send the broker wrote in part: one produce request carries records for a topic that takes
 * them and one record another topic refuses (MESSAGE_TOO_LARGE, its max.message.bytes). Both
 * clients fail the whole send and give back the numbers of the records that were written; the
 * publisher then sends the batch one record at a time (sendOneByOne). Unless the sends after the
 * failure go out on a new producer, the single records are refused as out of order and a next
 * batch of as many records as the written ones is acknowledged as their duplicate and dropped:
 * reported `sent`, in no topic. The loss of lostAnswer.test.ts without a proxy, so it runs on
 * both clients (twin under platformatic/).
 */
import { FERRY_HEADERS } from '@ferry/core';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { outboxMessage, readBack, testConnection, uniqueName } from './support';

const connection = testConnection();
const never = new AbortController().signal;
const roomy = uniqueName('partly-written');
const small = uniqueName('partly-written-small');

beforeAll(async () => {
  await ensureTopics(connection, [
    { topic: roomy, partitions: 1 },
    { topic: small, partitions: 1, configs: { 'max.message.bytes': '2000' } },
  ]);
});

afterAll(async () => {
  await deleteTopics(connection, [roomy, small]);
});

test('after a send written in part, its records go again one by one and the next batch of as many records is in the topic', async () => {
  const publisher = new KafkaPublisher(connection, { defaultDestination: roomy });
  const written = [outboxMessage({ orderingKey: 'a' }), outboxMessage({ orderingKey: 'b' })];
  const tooLarge = outboxMessage({
    destination: small,
    orderingKey: 'c',
    payload: { text: 'x'.repeat(5_000) },
  });
  const next = [outboxMessage({ orderingKey: 'd' }), outboxMessage({ orderingKey: 'e' })];
  let statuses: string[];
  try {
    const first = await publisher.publish([...written, tooLarge], never);
    const second = await publisher.publish(next, never);
    statuses = [...first, ...second].map((outcome) => outcome.status);
  } finally {
    await publisher.close();
  }
  // The records written in part are there twice (at least once), then the next batch.
  const records = await readBack(connection, roomy, 6).catch((error: Error) => {
    throw new Error(
      `${error.message} (outcomes ${statuses.join(', ')}): a batch reported sent is not in the topic`,
    );
  });
  const read = records.map((record) => record.headers[FERRY_HEADERS.messageId]);
  expect([...written, ...next].filter((message) => !read.includes(message.id))).toEqual([]);
  expect(statuses).toEqual(['sent', 'sent', 'permanent', 'sent', 'sent']);
}, 90_000);
