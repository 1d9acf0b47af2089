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

describe('an observer that calls close() inside an event (review 124)', () => {
  test.each(['connected', 'received', 'accepted', 'settled', 'lag'] as const)(
    'inside %s: close() settles, the last event is the closed one, every record accepted once',
    async (trigger) => {
      const topic = await harness.topicPair(`reenter-${trigger}`);
      await harness.raw.send({
        topic,
        messages: Array.from({ length: RECORDS }, (_, i) => ({
          key: `k${i}`,
          value: JSON.stringify({ n: i }),
        })),
      });
      const groupId = uniqueName('group');
      const consumer = `reenter-${trigger}`;
      const options = {
        connection: harness.connection,
        topic,
        groupId,
        consumer,
        ...fastGroup,
        maxWaitTimeMs: 200,
        maxBatchSize: 5,
        closeTimeoutMs: CLOSE_TIMEOUT_MS,
        identity: (record: { key: string | null }) => `id-${record.key}`,
      };
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
