/**
 * close() while a chunk is in flight whose acceptance then fails (the application closed its
 * inbox during the same shutdown): nothing of that chunk is committed, and no retry timer keeps
 * the process alive after close() resolved.
 */
import { FERRY_HEADERS, FerryError } from '@ferry/core';
import type { KafkaInboxConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { committedOffsets, waitFor } from './support';

const RETRY_DELAY_MS = 123_456;
let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  jest.restoreAllMocks();
  await harness.close();
});

test('close() during an acceptance that fails commits nothing of the chunk and leaves no retry timer holding the process', async () => {
  const topic = await harness.topicPair('close-failing');
  await harness.raw.send({
    topic,
    messages: Array.from({ length: 5 }, (_, index) => ({
      value: `{"n":${index}}`,
      headers: { [FERRY_HEADERS.messageId]: `m-${index}` },
    })),
  });
  const timers = jest.spyOn(global, 'setTimeout');
  let consumer: KafkaInboxConsumer | null = null;
  let closing: Promise<void> | null = null;
  harness.acceptor.afterCommit = async () => {
    if (closing !== null || consumer === null) return;
    closing = consumer.close();
    throw new FerryError('FERRY_CLOSED', 'the inbox was closed by the same shutdown');
  };
  const started = await harness.start(topic, 'close-failing', {
    retryBackoff: { initialMs: RETRY_DELAY_MS, maxMs: RETRY_DELAY_MS, jitter: 'none' },
  });
  consumer = started.handle;
  await waitFor(
    () => closing !== null,
    () => 'close() was never called',
  );
  await closing;
  harness.acceptor.afterCommit = null;

  // The closed inbox (FERRY_CLOSED) is batch-wide: reported as an outage, not a failure.
  expect(started.events.filter((event) => event.type === 'acceptance-unavailable')).toHaveLength(1);
  expect(started.events.filter((event) => event.type === 'acceptance-failed')).toEqual([]);
  expect((await committedOffsets(harness.connection, started.groupId, topic)).get(0)).toBe('-1');
  const retryTimers = timers.mock.calls
    .map((call, index) => ({ delay: call[1], timer: timers.mock.results[index]?.value as NodeJS.Timeout }))
    .filter((entry) => entry.delay === RETRY_DELAY_MS);
  expect(retryTimers.map((entry) => entry.timer.hasRef())).toEqual(retryTimers.map(() => false));
});
