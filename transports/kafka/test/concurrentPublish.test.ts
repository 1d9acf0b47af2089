/**
 * Publishes in flight at once on one KafkaPublisher, as the relay's pipelined cycles make them
 * (`pipelineDepth`, default 2): every message reported `sent` is in the topic. An idempotent
 * producer numbers each partition's records; two sends numbered from the same sequence make the
 * broker refuse the later one (OUT_OF_ORDER_SEQUENCE_NUMBER) or, when it has the same size as
 * one of the partition's last five batches, acknowledge it as a duplicate and drop its records.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { outboxMessage, readBack, testConnection, uniqueName } from './support';

const connection = testConnection();
const topics: string[] = [];
const never = new AbortController().signal;

afterAll(async () => {
  await deleteTopics(connection, topics);
});

async function topic(partitions: number): Promise<string> {
  const name = uniqueName('concurrent');
  topics.push(name);
  await ensureTopics(connection, [{ topic: name, partitions }]);
  return name;
}

/** Publishes batches of `sizes` at once, twice; returns how many times each message was reported sent. */
async function publishAtOnce(name: string, sizes: readonly number[]): Promise<Map<string, number>> {
  const publisher = new KafkaPublisher(connection, { defaultDestination: name });
  const sent = new Map<string, number>();
  try {
    await publisher.connect();
    const batches = sizes.map((size, call) =>
      Array.from({ length: size }, (_, index) => outboxMessage({ payload: { call, index } })),
    );
    // Two rounds: the first sends of a producer wait for its producer id; later ones do not.
    for (let round = 0; round < 2; round += 1) {
      const outcomes = await Promise.all(batches.map((batch) => publisher.publish(batch, never)));
      for (const outcome of outcomes.flat())
        sent.set(outcome.id, (sent.get(outcome.id) ?? 0) + (outcome.status === 'sent' ? 1 : 0));
    }
    return sent;
  } finally {
    await publisher.close();
  }
}

describe('KafkaPublisher with publishes in flight at once', () => {
  test.each([
    ['of the same size', [50, 50]],
    ['of different sizes', [40, 25, 60]],
  ])(
    'sends them all, and every message it reported sent is in the topic (batches %s)',
    async (_label, sizes) => {
      const name = await topic(1);
      const sent = await publishAtOnce(name, sizes);
      const reported = [...sent.values()].reduce((total, times) => total + times, 0);
      const records = await readBack(connection, name, reported).catch((error: Error) => {
        throw new Error(`${error.message}: records reported sent are missing from the topic`);
      });
      const read = new Map<string, number>();
      for (const record of records) {
        const id = record.headers[FERRY_HEADERS.messageId]!;
        read.set(id, (read.get(id) ?? 0) + 1);
      }
      const lost = [...sent].filter(([id, times]) => (read.get(id) ?? 0) < times).map(([id]) => id);
      expect({ lost: lost.length, notSent: [...sent.values()].filter((times) => times < 2).length }).toEqual({
        lost: 0,
        notSent: 0,
      });
    },
  );
});
