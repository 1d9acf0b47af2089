/**
 * review3 probe: `sessionTimeoutMs` below the broker's `group.min.session.timeout.ms` (6000 by
 * default; ferry accepts anything from 1000, src/options.ts). A plausible value: 3000.
 * Expected: ready() rejects at once with a non-retriable error naming sessionTimeoutMs (the broker
 * answers INVALID_SESSION_TIMEOUT, which no retry fixes), as RabbitMQ's ready() does for an
 * operator-only refusal (FERRY_PERMANENT_FAILURE).
 * Actual (FAILS on main): every start fails the same way and is retried with backoff forever;
 * ready() waits its whole timeout and rejects FERRY_TIMEOUT, retriable: true.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, type KafkaInboxConsumer } from '../../src';
import { ConsumerHarness } from '../consumerHarness';
import { uniqueName } from '../support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a session timeout the broker refuses fails ready() at once, naming the option', async () => {
  const topic = await harness.topicPair('review3-session');
  let refused: unknown = null;
  const events: TransportConsumerEvent[] = [];
  let handle: KafkaInboxConsumer | null = null;
  try {
    handle = attachKafkaConsumer(harness.acceptor, {
      connection: harness.connection,
      topic,
      groupId: uniqueName('group'),
      consumer: 'review3-session',
      sessionTimeoutMs: 3_000,
      heartbeatIntervalMs: 300,
      observer: (event) => events.push(event),
    });
    await handle.ready({ timeoutMs: 15_000 });
  } catch (error) {
    refused = error;
  } finally {
    await handle?.close();
  }
  expect({
    code: (refused as { code?: string } | null)?.code,
    message: String(refused),
    retriable: (refused as { retriable?: boolean } | null)?.retriable,
  }).toEqual({
    code: expect.not.stringMatching(/FERRY_TIMEOUT/),
    message: expect.stringContaining('sessionTimeoutMs'),
    retriable: false,
  });
});
