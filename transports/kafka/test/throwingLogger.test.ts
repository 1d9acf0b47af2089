/**
 * The logger is the application's and may throw (a destination that broke). The consumer must
 * lose the line and nothing else: a record it dead-letters (the warn line follows the send) is
 * dead-lettered once and committed, and the record behind it is accepted; on main the throw
 * failed the chunk after the send, so the record was dead-lettered again on every retry and the
 * partition never moved.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { REJECT_REASONS } from '../src';
import { throwingLogger } from '../../../test-support/throwingLogger';
import { ConsumerHarness } from './consumerHarness';
import { readBack } from './support';

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

test('a dead letter and its neighbour are settled once although every log line throws', async () => {
  const { logger, calls } = throwingLogger();
  const topic = await harness.topicPair('throwing-logger');
  await harness.raw.send({
    topic,
    messages: [
      { key: 'gone', value: null, headers: { [FERRY_HEADERS.messageId]: 'dead-1' } },
      { value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'ok-2' } },
    ],
  });
  const { groupId, events } = await harness.start(topic, 'throwing-logger', { logger });

  await harness.waitFullyCommitted(groupId, topic);
  expect((await harness.acceptor.rows('throwing-logger')).map((row) => row.messageId)).toEqual(['ok-2']);
  const dead = await readBack(harness.connection, `${topic}.dlq`, 1);
  expect(dead.map((record) => [record.key, record.headers[FERRY_HEADERS.rejectReason]])).toEqual([
    ['gone', REJECT_REASONS.tombstone],
  ]);
  expect(events.filter((event) => event.type === 'dead-lettered')).toHaveLength(1);
  expect(calls()).toBeGreaterThan(0);
});
