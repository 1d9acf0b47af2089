/**
 * The lifecycle events of a consumer attached before its topic exists (review 72 found SQS's
 * consumer reporting that one start as two `connected`): each failed start is `disconnected`, and
 * the start once the topic exists is one `connected`, followed by nothing but close()'s
 * `disconnected`.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, ensureTopics } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { fastGroup, silentLogger, uniqueName, waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a consumer attached before its topic exists reports its one start as one connected', async () => {
  const topic = uniqueName('late-topic');
  harness.ownTopic(topic);
  harness.ownTopic(`${topic}.dlq`);
  const events: TransportConsumerEvent[] = [];
  const handle = attachKafkaConsumer(harness.acceptor, {
    connection: harness.connection,
    topic,
    groupId: uniqueName('group'),
    consumer: 'late-topic',
    ...fastGroup,
    maxWaitTimeMs: 200,
    reconnectBackoff: { initialMs: 100, maxMs: 300 },
    logger: silentLogger,
    observer: (event) => void events.push(event),
  });
  try {
    await waitFor(
      () => events.some((e) => e.type === 'disconnected'),
      () => 'a failed start',
    );
    await ensureTopics(harness.connection, [{ topic }, { topic: `${topic}.dlq` }]);
    await handle.ready({ timeoutMs: 30_000 });
    await harness.raw.send({
      topic,
      messages: [{ value: '{"n":1}', headers: { [FERRY_HEADERS.messageId]: `${topic}-1` } }],
    });
    await waitFor(
      () => events.some((e) => e.type === 'settled'),
      () => 'the record settled',
    );
  } finally {
    await handle.close();
  }
  const lifecycle = events
    .map((e) => e.type)
    .filter((type) => type === 'connected' || type === 'disconnected');
  const failedStarts = lifecycle.indexOf('connected');
  expect(failedStarts).toBeGreaterThan(0);
  expect(lifecycle.slice(failedStarts)).toEqual(['connected', 'disconnected']);
  expect(await harness.acceptor.count('late-topic')).toBe(1);
});
