/**
 * review3 probe (FAILS on main): a dead-letter topic with `cleanup.policy=compact` (e.g. made with
 * the same configs as a compacted source topic, where tombstones come from) refuses every record
 * without a key (INVALID_RECORD, "Compacted topic cannot accept message without key").
 * src/deadLetter.ts sendAlone tries the record, then its headers without value, then throws the
 * permanent error when the key is null: the chunk fails, is sought back and retried for ever.
 * README: "a record the dead-letter topic cannot hold never stalls its partition".
 * Expected: the keyless record is dead-lettered some way (or skipped with an error log), and the
 * record behind it is accepted. Actual: the partition stalls at the keyless record (the record
 * behind it is even accepted into the inbox, but never committed), acceptance-failed for ever:
 * kafkajs "INVALID_RECORD" (permanent, rethrown by sendAlone because the key is null),
 * @platformatic/kafka "UNKNOWN_SERVER_ERROR" (its first error, classified retriable).
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { ensureTopics } from '../../src';
import { ConsumerHarness } from '../consumerHarness';
import { uniqueName, waitFor } from '../support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a keyless record rejected into a compacted dead-letter topic does not stall its partition', async () => {
  const topic = uniqueName('review3-compact');
  const deadLetter = `${topic}.dead`;
  harness.ownTopic(topic);
  harness.ownTopic(deadLetter);
  await ensureTopics(harness.connection, [
    { topic },
    { topic: deadLetter, configs: { 'cleanup.policy': 'compact' } },
  ]);
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'bad' } },
      { value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'good' } },
    ],
  });
  const { events, groupId } = await harness.start(topic, 'review3-compact', {
    deadLetter: { topic: deadLetter },
  });
  const failures = (list: TransportConsumerEvent[]) => list.filter((e) => e.type === 'acceptance-failed');
  const committed = () => harness.fullyCommitted(groupId, topic);
  await waitFor(
    async () => (await committed()) || failures(events).length >= 3,
    () => 'the partition committed to its end, or three failed attempts',
  );
  const firstError = failures(events)[0];
  expect({
    committed: await committed(),
    error: firstError && 'error' in firstError ? firstError.error : null,
  }).toEqual({ committed: true, error: null });
});
