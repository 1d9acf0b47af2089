/**
 * Review 124: an observer that re-enters the Kafka consumer from inside an event: it calls the
 * consumer's close() synchronously in the callback (an application that shuts down on its first
 * `connected`, on a batch it did not expect, on lag). Expected: close() settles within its bound,
 * no unhandled rejection, no event after the `disconnected` of `reason: 'closed'`, and every record
 * is accepted exactly once (a record accepted and not committed is read again by the next member
 * and answered as a duplicate: never a second row, never lost).
 */
import { attachKafkaConsumer, type KafkaInboxConsumer } from '../src';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { ConsumerHarness } from './consumerHarness';
import { captureLogger, fastGroup, uniqueName, waitFor } from './support';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';

failOnUnhandledRejections();

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

const RECORDS = 24;
const CLOSE_TIMEOUT_MS = 10_000;

/** A topic holding `records` records keyed k0.., and the options of a consumer `consumer` of it in a new group. */
async function topicAndOptions(consumer: string, records: number) {
  const topic = await harness.topicPair(consumer);
  await harness.raw.send({
    topic,
    messages: Array.from({ length: records }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ n: i }) })),
  });
  const groupId = uniqueName('group');
  return {
    topic,
    groupId,
    options: {
      connection: harness.connection,
      topic,
      groupId,
      consumer,
      ...fastGroup,
      maxWaitTimeMs: 200,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      retryBackoff: { initialMs: 50, maxMs: 100 },
      identity: (record: { key: string | null }) => `id-${record.key}`,
    },
  };
}

describe('an observer that calls close() inside an event (review 124)', () => {
  test.each(['connected', 'received', 'accepted', 'settled', 'lag'] as const)(
    'inside %s: close() settles, the last event is the closed one, every record accepted once',
    async (trigger) => {
      const consumer = `reenter-${trigger}`;
      const setup = await topicAndOptions(consumer, RECORDS);
      const { topic, groupId } = setup;
      const options = { ...setup.options, maxBatchSize: 5 };
      const log = captureLogger();
      const events: TransportConsumerEvent[] = [];
      let closing: Promise<void> | undefined;
      let handle: KafkaInboxConsumer | undefined = undefined;
      handle = attachKafkaConsumer(harness.acceptor, {
        ...options,
        logger: log.logger,
        observer: (event) => {
          events.push(event);
          if (event.type === trigger && closing === undefined) closing = handle!.close();
        },
      });
      await waitFor(
        () => closing !== undefined,
        () => `no ${trigger} event: ${JSON.stringify(events)}`,
      );
      expect(await outcomeWithin(closing!, CLOSE_TIMEOUT_MS + 20_000)).toEqual({ value: undefined });
      // Within its bound: not ended by closeTimeoutMs's fallback (its clients destroyed).
      expect(log.lines.map((line) => line.msg)).toEqual([]);
      const last = events[events.length - 1];
      expect(last).toMatchObject({ type: 'disconnected', reason: 'closed' });
      const count = events.length;

      // The next member of the group reads what the first did not commit.
      const next = attachKafkaConsumer(harness.acceptor, options);
      try {
        await harness.waitFullyCommitted(groupId, topic);
      } finally {
        await next.close();
      }
      expect(events.slice(count - 1)).toEqual([last]);
      const ids = (await harness.acceptor.rows(consumer)).map((row) => row.messageId);
      expect(ids.length).toBe(RECORDS);
      expect(new Set(ids).size).toBe(RECORDS);
    },
  );
});

test('inside acceptance-unavailable (the inbox refusing): close() settles, nothing is committed, the next member stores all once', async () => {
  const consumer = 'reenter-outage';
  const { topic, groupId, options } = await topicAndOptions(consumer, 6);
  const events: TransportConsumerEvent[] = [];
  let closing: Promise<void> | undefined;
  harness.acceptor.refuse = true;
  try {
    let handle: KafkaInboxConsumer | undefined = undefined;
    handle = attachKafkaConsumer(harness.acceptor, {
      ...options,
      observer: (event) => {
        events.push(event);
        if (event.type === 'acceptance-unavailable' && closing === undefined) closing = handle!.close();
      },
    });
    await waitFor(
      () => closing !== undefined,
      () => `no outage: ${JSON.stringify(events)}`,
    );
    expect(await outcomeWithin(closing!, CLOSE_TIMEOUT_MS + 20_000)).toEqual({ value: undefined });
    expect(events[events.length - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });
    expect(await harness.fullyCommitted(groupId, topic)).toBe(false);
  } finally {
    harness.acceptor.refuse = false;
  }
  const next = attachKafkaConsumer(harness.acceptor, options);
  try {
    await harness.waitFullyCommitted(groupId, topic);
  } finally {
    await next.close();
  }
  const ids = (await harness.acceptor.rows(consumer)).map((row) => row.messageId);
  expect(ids.sort()).toEqual(Array.from({ length: 6 }, (_, i) => `id-k${i}`).sort());
});
