/**
 * review3 probe (FAILS on main): `deadLetter.topic` may name the source topic itself (a plausible
 * slip: `topic: 'orders', deadLetter: { topic: 'orders' }`, or `topics: ['orders', 'errors']` with
 * `deadLetter: { topic: 'errors' }`). src/options.ts resolveDeadLetterTopic only checks it is a
 * topic name. Every rejected record is then produced back into the topic being consumed, read
 * again, rejected again, and produced again: one tombstone becomes an endless stream of records.
 * Expected: attach refuses it (FERRY_CONFIG_INVALID naming deadLetter.topic), or a dead letter
 * into a consumed topic holds the partition.
 * Actual: accepted; the topic grows by one record per round trip, forever.
 */
import { FerryConfigError } from '@ferry/core';
import { ConsumerHarness } from '../consumerHarness';
import { endOffsets, waitFor } from '../support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a dead-letter topic equal to the consumed topic is refused, not looped through', async () => {
  const topic = await harness.topicPair('review3-dlq-loop');
  let refused: unknown = null;
  try {
    await harness.start(topic, 'review3-dlq-loop', { deadLetter: { topic } });
  } catch (error) {
    refused = error;
  }
  if (refused === null) {
    await harness.raw.send({ topic, messages: [{ key: 'gone', value: null }] });
    const size = async () => Number((await endOffsets(harness.connection, topic)).get(0) ?? '0');
    // Evidence of the loop: one record sent, the topic keeps growing (bounded wait, never a threshold).
    await waitFor(
      async () => (await size()) >= 20,
      () => 'the topic to grow to 20 records',
    ).catch(() => undefined);
    expect({ recordsInTopicAfterOneTombstone: await size() }).toEqual({ recordsInTopicAfterOneTombstone: 1 });
  }
  expect(refused).toBeInstanceOf(FerryConfigError);
});
