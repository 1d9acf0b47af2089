/**
 * Hostile orders of lifecycle calls on the SQS consumer and publisher: ready() and close() in
 * every order, close() twice at once, close() while a batch is being accepted, the connection
 * closed under a running consumer, publish() after and during close(). Each call works or fails
 * with a typed FerryError, nothing hangs or keeps polling, no rejection goes unhandled, nothing
 * accepted is left in the queue, and nothing is reported sent that SQS did not take. A closed
 * publisher answers `unavailable` (SQS out of reach): the relay on it spends no attempt.
 */
import { describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type SqsConnection, type SqsConsumer } from '@ferry/sqs';
import { failOnUnhandledRejections, readyOutcome as outcome } from '../../../test-support/lifecycle';
import { expectNothingSpent, runRelayOnClosedPublisher } from '../../../test-support/closedPublisherRelay';
import type { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  heldMessages,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  receiveNone,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

failOnUnhandledRejections();

describe('SQS consumer and publisher: any order of lifecycle calls', () => {
  const f = useSqsConsumerFixture();
  const { consumers } = f;
  const freshAcceptor = (): Promise<PgTestAcceptor> => f.freshAcceptor();

  function attach(
    acceptor: PgTestAcceptor,
    queueUrl: string,
    on: SqsConnection = f.connection,
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: on,
      queueUrl,
      consumer: 'orders',
      waitTimeSeconds: 1,
      reconnectBackoff: { initialMs: 20, maxMs: 50 },
      observer: (event) => events.push(event),
    });
    consumers.push(consumer);
    return { consumer, events };
  }

  it('ready() and close() in every order: before ready() resolved, twice at once, ready() after close()', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('orders') });
    const early = attach(acceptor, queueUrl).consumer;
    const ready = outcome(early.ready());
    await Promise.all([early.close(), early.close()]);
    expect(['ready', 'FERRY_CLOSED']).toContain(await ready);
    expect(await outcome(early.ready())).toBe('FERRY_CLOSED');

    const late = attach(acceptor, queueUrl).consumer;
    await late.ready();
    const both = await Promise.allSettled([late.close(), late.close()]);
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    await expect(late.close()).resolves.toBeUndefined();
    expect(await outcome(late.ready())).toBe('FERRY_CLOSED');
    await sendRaw(f.connection, queueUrl, '{"after":"close"}', { [FERRY_HEADERS.messageId]: 'after-close' });
    expect(await receiveAtLeast(f.connection, queueUrl, 1)).toHaveLength(1);
    expect(acceptor.seen).toEqual([]);
  }, 20_000);

  it('close() while a batch is being accepted waits for it and deletes what was accepted', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('held') });
    acceptor.hold();
    const { consumer } = attach(acceptor, queueUrl);
    await consumer.ready();
    for (const n of [1, 2, 3]) {
      await sendRaw(f.connection, queueUrl, `{"n":${n}}`, { [FERRY_HEADERS.messageId]: `held-${n}` });
    }
    await waitFor('acceptance to start', () => (acceptor.held() > 0 ? true : undefined));
    const order: string[] = [];
    const closing = consumer.close().then(() => order.push('closed'));
    await Promise.resolve();
    order.push('released');
    acceptor.release();
    await closing;
    expect(order).toEqual(['released', 'closed']);
    const stored = await acceptor.storedIds();
    expect(stored.length).toBeGreaterThan(0);
    // What was accepted was deleted; what was not is offered again, to the next consumer.
    const left = (await receiveAtLeast(f.connection, queueUrl, 3 - stored.length)).map(
      (m) => m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue,
    );
    expect(left.filter((id) => id !== undefined && stored.includes(id))).toEqual([]);
    expect(await receiveNone(f.connection, queueUrl)).toEqual([]);
  }, 20_000);

  it('stops polling, typed, when its connection is closed under it; close() still resolves', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('gone') });
    const own = openConnection();
    const { consumer, events } = attach(acceptor, queueUrl, own);
    await consumer.ready();
    await own.close();
    const stopped = await waitFor(
      'the consumer to stop for good',
      () => events.find((event) => event.type === 'disconnected' && event.retryInMs === null),
      5_000,
    );
    expect(stopped).toMatchObject({
      type: 'disconnected',
      retryInMs: null,
      error: expect.stringMatching(/closed/i),
    });
    const failures = events.filter((event) => event.type === 'disconnected').length;
    await consumer.close();
    expect(
      events.filter((event) => event.type === 'disconnected' && event.retryInMs !== null).length,
    ).toBeLessThanOrEqual(failures);
  }, 20_000);

  it('attached to a connection already closed: ready() fails FERRY_CLOSED at once, close() resolves', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('late') });
    const own = openConnection();
    await own.close();
    const { consumer } = attach(acceptor, queueUrl, own);
    expect(await outcome(consumer.ready({ timeoutMs: 10_000 }))).toBe('FERRY_CLOSED');
    await consumer.close();
  }, 20_000);

  it('publish() after close() is unavailable, with no observer event; close() twice; close() during publish() keeps what SQS took sent, the rest unavailable', async () => {
    const { queueUrl } = await f.queues.declare({ name: uniqueName('published') });
    const events: TransportPublisherEvent[] = [];
    const closed = new SqsPublisher(f.connection, { observer: (event) => void events.push(event) });
    await Promise.all([closed.close(), closed.close()]);
    const after = await closed.publish(outboxMessages(2, queueUrl), neverAborted());
    // Observed on main: retryable, an attempt spent per event and cycle on a closed publisher.
    expect(after.map((o) => [o.status, 'error' in o ? o.error : null])).toEqual([
      ['unavailable', 'SQS publisher is closed'],
      ['unavailable', 'SQS publisher is closed'],
    ]);
    // Observed on main: a publish-failed (unavailable, "SQS publisher is closed") per call after
    // close() resolved, to an observer its owner had shut down (review 148).
    expect(events).toEqual([]);

    const publisher = new SqsPublisher(f.connection);
    const messages = outboxMessages(15, queueUrl);
    const publishing = publisher.publish(messages, neverAborted());
    await Promise.all([publisher.close(), publisher.close()]);
    const outcomes = await publishing;
    expect(outcomes.map((o) => o.id)).toEqual(messages.map((m) => m.id));
    // What close() kept from being confirmed is SQS out of reach, not the message's fault.
    expect(outcomes.filter((o) => o.status !== 'sent' && o.status !== 'unavailable')).toEqual([]);
    const sent = outcomes.filter((o) => o.status === 'sent').map((o) => o.id);
    const received = (await receiveAtLeast(f.connection, queueUrl, sent.length)).map(
      (m) => m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue,
    );
    expect(sent.filter((id) => !received.includes(id))).toEqual([]);
  }, 20_000);

  // Observed on main: the events in flight at close() and every later cycle's batches answered
  // retryable ("SQS publisher is closed"): retry_count 1, then FAILED after maxRetries cycles.
  it('the relay on a publisher closed under it keeps every event not confirmed PENDING with no attempt spent, cycle after cycle; only what SQS took is SENT', async () => {
    const { queueUrl } = await f.queues.declare({ name: uniqueName('closed_relay') });
    const run = await runRelayOnClosedPublisher({
      publisher: new SqsPublisher(f.connection),
      destination: queueUrl,
      taken: async () => {
        const held = await heldMessages(f.connection, queueUrl);
        return (await receiveAtLeast(f.connection, queueUrl, held)).map(
          (m) => m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue,
        );
      },
    });
    expectNothingSpent(run);
  }, 90_000);
});
