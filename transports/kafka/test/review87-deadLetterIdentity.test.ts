/**
 * Review finding (failed first), review 87. A dead-letter copy carries as `x-ferry-message-id` the
 * identity the consumer used when the record had none (review 84, core deadLetterIdentity), so a
 * copy produced twice (the commit after it failed) is one receipt when the dead-letter topic is
 * drained. "Had none" was read as "has no header of that name" (Object.hasOwn), but the consumer
 * reads an empty header as none (readFerryHeaders: nonEmptyValue) and uses the identity extractor.
 * What the user sees: a record whose producer wrote `x-ferry-message-id: ''` (an unset id field
 * serialized as empty) is dead-lettered with its empty header kept and without the identity the
 * consumer used (topic-partition-offset): each copy of it is a receipt of its own once drained.
 * What should happen: the copy carries the identity the consumer used, as for a record without
 * the header.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { topicPartitionOffsetIdentity } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { readBack, testConnection, uniqueName, waitFor } from './support';

const connection = testConnection();
let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a dead-letter copy of a record whose message-id header is empty carries the identity the consumer used', async () => {
  const topic = await harness.topicPair('r87-empty-id', 1);
  const groupId = uniqueName('group');
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: '' } },
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: Buffer.alloc(0) } },
      // Repeated with one value: not ambiguous, read as that value (empty: none).
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: ['', ''] } },
      { value: '{"a":1}', headers: { [FERRY_HEADERS.messageId]: 'neighbour' } },
    ],
  });
  await harness.start(topic, 'r87-empty-id', { groupId, identity: topicPartitionOffsetIdentity });
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit past the invalid records',
  );
  const dead = await readBack(connection, `${topic}.dlq`, 3);
  expect(dead.map((record) => record.headerValues[FERRY_HEADERS.messageId])).toEqual([
    [`${topic}-0-0`],
    [`${topic}-0-1`],
    [`${topic}-0-2`],
  ]);
  expect((await harness.acceptor.rows('r87-empty-id')).map((row) => row.messageId)).toEqual(['neighbour']);
});

// Review 87: a value nested past the inbox's 64 levels is refused unparsed (V8's JSON.parse of
// nested arrays costs about ten times a flat value of the same size: a partition of them kept the
// consumer from its heartbeats), and the partition goes on.
test('a record nested past 64 levels is dead-lettered payload_too_deep unparsed; the partition goes on', async () => {
  const topic = await harness.topicPair('r87-deep', 1);
  const groupId = uniqueName('group');
  const deep = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
  await harness.raw.send({
    topic,
    messages: [
      { value: deep(65), headers: { [FERRY_HEADERS.messageId]: 'deep-65' } },
      { value: deep(64), headers: { [FERRY_HEADERS.messageId]: 'deep-64' } },
    ],
  });
  await harness.start(topic, 'r87-deep', { groupId });
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit past the nested record',
  );
  const [dead] = await readBack(connection, `${topic}.dlq`, 1);
  expect([dead?.headers[FERRY_HEADERS.messageId], dead?.headers[FERRY_HEADERS.rejectReason]]).toEqual([
    'deep-65',
    'payload_too_deep',
  ]);
  expect(dead?.headers['x-ferry-reject-detail']).toMatch(/^body nests deeper than 64 levels/);
  expect((await harness.acceptor.rows('r87-deep')).map((row) => row.messageId)).toEqual(['deep-64']);
});
