/**
 * Hostile orders of lifecycle calls on the Kafka consumer and publisher (the twin in
 * platformatic/ runs them on @platformatic/kafka): ready() and close() in every order, close()
 * twice at once, close() while a chunk's acceptance is in flight, publish() after and during
 * close(). Each call works or fails with a typed FerryError, nothing hangs, no rejection goes
 * unhandled, nothing accepted is left uncommitted, and nothing is reported sent unconfirmed. A
 * closed publisher answers `unavailable` (the cluster out of reach): the relay on it spends no attempt.
 * (closeQuiet.test.ts proves that close() mid-connect leaves no socket or timer.)
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportPublisherEvent } from '@ferry/core/transport';
import { KafkaPublisher, attachKafkaConsumer } from '../src';
import { failOnUnhandledRejections, readyOutcome as outcome } from '../../../test-support/lifecycle';
import { expectNothingSpent, runRelayOnClosedPublisher } from '../../../test-support/closedPublisherRelay';
import { ConsumerHarness } from './consumerHarness';
import { committedOffsets, endOffsets, fastGroup, outboxMessage, readBack, uniqueName } from './support';

let harness: ConsumerHarness;
const never = new AbortController().signal;

failOnUnhandledRejections();
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

test('ready() and close() in every order: close() twice at once, ready() after close(), close() before ready() resolved', async () => {
  const topic = await harness.topicPair('orders');
  const { handle } = await harness.start(topic, 'orders');
  await expect(handle.ready()).resolves.toBeUndefined();
  const both = await Promise.allSettled([handle.close(), handle.close()]);
  expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  await expect(handle.close()).resolves.toBeUndefined();
  expect(await outcome(handle.ready())).toBe('FERRY_CLOSED');

  const early = attachKafkaConsumer(harness.acceptor, {
    connection: harness.connection,
    topic,
    groupId: uniqueName('group'),
    consumer: 'orders',
    ...fastGroup,
  });
  const ready = outcome(early.ready());
  await Promise.all([early.close(), early.close()]);
  expect(await ready).toBe('FERRY_CLOSED');
  expect(await outcome(early.ready())).toBe('FERRY_CLOSED');
}, 60_000);

test('close() while a chunk is being accepted waits for it and commits it', async () => {
  const topic = await harness.topicPair('held');
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  harness.acceptor.afterCommit = async () => {
    enter();
    await gate;
  };
  try {
    const { handle, groupId } = await harness.start(topic, 'held');
    await harness.raw.send({
      topic,
      messages: [1, 2, 3].map((n) => ({
        value: `{"n":${n}}`,
        headers: { [FERRY_HEADERS.messageId]: `h-${n}` },
      })),
    });
    await entered;
    const order: string[] = [];
    const closing = handle.close().then(() => order.push('closed'));
    // The consumer is stopping (a second close() shares the promise) while the acceptance waits.
    await Promise.resolve();
    order.push('released');
    release();
    await closing;
    expect(order).toEqual(['released', 'closed']);
    const committed = await committedOffsets(harness.connection, groupId, topic);
    // Every record accepted before close() resolved is committed: none is offered again.
    const stored = (await harness.acceptor.rows('held')).length;
    expect(stored).toBeGreaterThan(0);
    expect(Number(committed.get(0))).toBe(stored);
  } finally {
    harness.acceptor.afterCommit = null;
    release();
  }
}, 60_000);

test('publish() after close(), close() twice, close() during publish(): no outcome is sent unless the record is on the topic; no observer event after close()', async () => {
  const topic = await harness.topicPair('published');
  const events: TransportPublisherEvent[] = [];
  const closed = new KafkaPublisher(harness.connection, {
    defaultDestination: topic,
    observer: (event) => void events.push(event),
  });
  await closed.connect();
  await Promise.all([closed.close(), closed.close()]);
  const after = await closed.publish([outboxMessage()], never);
  // Observed on main: retryable, an attempt spent per event and cycle on a closed publisher.
  expect(after.map((o) => [o.status, 'error' in o ? o.error : null])).toEqual([
    ['unavailable', 'publisher is closed'],
  ]);
  // Observed on main: a publish-failed (unavailable, "publisher is closed") per call after close()
  // resolved, to an observer its owner had shut down (review 148).
  expect(events).toEqual([]);
  await expect(closed.connect()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });

  const publisher = new KafkaPublisher(harness.connection, { defaultDestination: topic });
  await publisher.connect();
  const messages = Array.from({ length: 20 }, () => outboxMessage());
  const publishing = publisher.publish(messages, never);
  await Promise.all([publisher.close(), publisher.close()]);
  const outcomes = await publishing;
  expect(outcomes.map((o) => o.id)).toEqual(messages.map((m) => m.id));
  // What close() kept from being confirmed is the cluster out of reach, not the message's fault.
  expect(outcomes.filter((o) => o.status !== 'sent' && o.status !== 'unavailable')).toEqual([]);
  const sent = outcomes.filter((o) => o.status === 'sent').map((o) => o.id);
  if (sent.length > 0) {
    const records = await readBack(harness.connection, topic, sent.length);
    const onTopic = new Set(records.map((r) => r.headers[FERRY_HEADERS.messageId]));
    expect(sent.filter((id) => !onTopic.has(id))).toEqual([]);
  }
}, 60_000);

// Observed on main: the events in flight at close() and every later cycle's batches answered
// retryable ("publisher is closed", "send abandoned: Kafka publisher is closed"): retry_count 1, then
// FAILED after maxRetries cycles.
test('the relay on a publisher closed under it keeps every event not confirmed PENDING with no attempt spent, cycle after cycle; only what the cluster took is SENT', async () => {
  const topic = await harness.topicPair('closed-relay');
  const run = await runRelayOnClosedPublisher({
    publisher: new KafkaPublisher(harness.connection, { defaultDestination: topic }),
    destination: topic,
    taken: async () => {
      const onTopic = Number((await endOffsets(harness.connection, topic)).get(0) ?? '0');
      const records = onTopic > 0 ? await readBack(harness.connection, topic, onTopic) : [];
      return records.map((r) => r.headers[FERRY_HEADERS.messageId]);
    },
  });
  expectNothingSpent(run);
}, 90_000);
