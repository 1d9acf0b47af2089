import { describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS, FerryError, type InboxAcceptInput } from '@ferry/core';
import {
  REJECT_DETAIL_ATTRIBUTE,
  SqsPublisher,
  attachSqsConsumer,
  type AttachConsumerOptions,
  type SqsConsumer,
} from '@ferry/sqs';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  countRequests,
  neverAborted,
  outboxMessages,
  receiveAtLeast,
  receiveNone,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('SQS consumer feeding a PostgreSQL inbox', () => {
  const f = useSqsConsumerFixture();
  const { consumers } = f;
  const freshAcceptor = (): Promise<PgTestAcceptor> => f.freshAcceptor();

  function attach(
    acceptor: PgTestAcceptor,
    options: Omit<AttachConsumerOptions, 'connection' | 'consumer'> & { consumer?: string },
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      observer: (event) => events.push(event),
      ...options,
    });
    consumers.push(consumer);
    return { consumer, events };
  }

  const count = (events: TransportConsumerEvent[], type: TransportConsumerEvent['type']) =>
    events.filter((e) => e.type === type).length;
  /** The summed `count` of the events of one type. */
  const sum = (events: TransportConsumerEvent[], type: TransportConsumerEvent['type']) =>
    events.reduce((n, e) => n + (e.type === type && 'count' in e ? e.count : 0), 0);

  it('round-trips published events into the inbox once each, duplicates included, and empties the queue', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('trip') });
    const published: TransportPublisherEvent[] = [];
    const publisher = new SqsPublisher(f.connection, { observer: (event) => published.push(event) });
    const messages = outboxMessages(30, queueUrl, { correlationId: 'corr-7', headers: { 'x-app': 'shop' } });
    expect((await publisher.publish(messages, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    // The relay published 10 of them again (lost confirmation): SQS now holds 40 messages.
    await publisher.publish(messages.slice(0, 10), neverAborted());
    const { consumer, events } = attach(acceptor, { queueUrl });
    await consumer.ready();

    await waitFor('40 deliveries offered and deleted', () =>
      acceptor.seen.length >= 40 && sum(events, 'settled') >= 40 ? true : undefined,
    );
    // Duplicates count as accepted: the inbox answered for them and they were deleted.
    expect([sum(events, 'received'), sum(events, 'accepted'), sum(events, 'settled')]).toEqual([40, 40, 40]);
    expect(events[0]).toEqual({
      type: 'connected',
      transport: 'sqs',
      source: queueUrl,
      instance: expect.any(String),
    });
    expect(events.every((e) => e.transport === 'sqs' && e.source === queueUrl)).toBe(true);
    expect(published.map((e) => e.type === 'published' && [e.transport, e.destination, e.count])).toEqual([
      ['sqs', queueUrl, 30],
      ['sqs', queueUrl, 10],
    ]);
    const stored = await acceptor.stored();
    expect(stored.map((row) => row.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(stored[0]).toMatchObject({ tenantId: 'tenant-a', type: 'order.placed' });
    expect(stored[0]!.headers).toMatchObject({ 'x-app': 'shop', [FERRY_HEADERS.correlationId]: 'corr-7' });
    await consumer.close();
    expect(await receiveNone(f.connection, queueUrl)).toEqual([]);
  });

  it('accepts FIFO messages of one group in publish order', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: `${uniqueName('order')}.fifo` });
    const messages = outboxMessages(25, queueUrl, { orderingKey: 'customer-9' });
    await new SqsPublisher(f.connection).publish(messages, neverAborted());
    const { consumer } = attach(acceptor, { queueUrl });
    await consumer.ready();
    await waitFor('25 stored', async () => ((await acceptor.storedIds()).length >= 25 ? true : undefined));
    expect(await acceptor.storedIds()).toEqual(messages.map((m) => m.id));
  });

  it('holds a batch invisible through a database outage longer than maxReceiveCount x backoff, then accepts each once', async () => {
    const acceptor = await freshAcceptor();
    await acceptor.refuse(true);
    const { queueUrl, deadLetterQueueUrl } = await f.queues.declare({
      name: uniqueName('outage'),
      deadLetter: { maxReceiveCount: 2 },
    });
    const messages = outboxMessages(3, queueUrl);
    await new SqsPublisher(f.connection).publish(messages, neverAborted());
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      deadLetter: { mode: 'redrive' },
      visibilityTimeoutSeconds: 1,
      extendEveryMs: 300,
      retryBackoff: { initialMs: 200, maxMs: 400, jitter: 'none' },
    });
    await consumer.ready();

    // Past several visibility timeouts and far past 2 receives' worth of retry backoff.
    const offeredOf = (id: string) => acceptor.seen.filter((offered) => offered === id).length;
    await waitFor('six refused attempts', () =>
      acceptor.seen.length > 0 && offeredOf(acceptor.seen[0]!) >= 6 ? true : undefined,
    );
    expect(count(events, 'settled')).toBe(0);
    expect(count(events, 'acceptance-unavailable')).toBeGreaterThanOrEqual(5);
    expect(events.find((e) => e.type === 'acceptance-unavailable')).toMatchObject({
      transport: 'sqs',
      source: queueUrl,
      count: 3,
      attempt: 1,
      error: expect.stringMatching(/^FERRY_DATABASE_UNAVAILABLE: /),
    });

    await acceptor.refuse(false);

    await waitFor('3 stored and deleted', async () =>
      (await acceptor.storedIds()).length >= 3 && sum(events, 'settled') >= 3 ? true : undefined,
    );
    expect((await acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(count(events, 'acceptance-recovered')).toBeGreaterThanOrEqual(1);
    // Each message was received once: the outage spent none of its receive count.
    expect(sum(events, 'received')).toBe(3);
    await consumer.close();
    expect(await receiveNone(f.connection, deadLetterQueueUrl!)).toEqual([]);
    expect(await receiveNone(f.connection, queueUrl)).toEqual([]);
  });

  it('makes a batch held through an outage visible again on close(), at once', async () => {
    const acceptor = await freshAcceptor();
    await acceptor.refuse(true);
    const { queueUrl } = await f.queues.declare({ name: uniqueName('release') });
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(f.connection).publish(messages, neverAborted());
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      visibilityTimeoutSeconds: 60,
      retryBackoff: { initialMs: 60_000, maxMs: 60_000, jitter: 'none' },
    });
    await consumer.ready();
    await waitFor('acceptance unavailable', () =>
      count(events, 'acceptance-unavailable') + count(events, 'acceptance-failed') > 0 ? true : undefined,
    );

    await consumer.close();

    // Retry backoff and visibility timeout are 60 s: only the release on close() returns them this soon.
    const back = await receiveAtLeast(f.connection, queueUrl, 2, 5_000);
    expect(back.map((m) => m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).sort()).toEqual(
      messages.map((m) => m.id).sort(),
    );
    expect(await acceptor.storedIds()).toEqual([]);
  });

  it('gives a batch that fails with a retriable non-outage error the visibility backoff of its receive count', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('refuse') });
    const messages = outboxMessages(3, queueUrl);
    await new SqsPublisher(f.connection).publish(messages, neverAborted());
    let failing = true;
    const flaky = {
      maxPayloadBytes: acceptor.maxPayloadBytes,
      acceptMany: (inputs: readonly InboxAcceptInput[]) =>
        failing
          ? Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'))
          : acceptor.acceptMany(inputs),
    };
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(flaky, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      observer: (event) => events.push(event),
    });
    consumers.push(consumer);
    await consumer.ready();

    await waitFor('two refused receives', () => (count(events, 'acceptance-failed') >= 2 ? true : undefined));
    expect(count(events, 'settled')).toBe(0);
    const failure = events.find((e) => e.type === 'acceptance-failed');
    expect(failure).toMatchObject({
      transport: 'sqs',
      source: queueUrl,
      delayMs: 1_000,
      error: 'FERRY_DATABASE_ERROR: statement failed, cause unknown',
    });
    failing = false;
    await waitFor('3 stored', async () => ((await acceptor.storedIds()).length >= 3 ? true : undefined));
    await waitFor('settled', () => (count(events, 'settled') > 0 ? true : undefined));
    expect((await acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
  });

  it('keeps a batch invisible to a second consumer while a slow acceptance runs past the visibility timeout', async () => {
    const acceptor = await freshAcceptor();
    const bystander = await PgTestAcceptor.create(f.database.db);
    const { queueUrl } = await f.queues.declare({ name: uniqueName('slow') });
    const [message] = outboxMessages(1, queueUrl);
    await new SqsPublisher(f.connection).publish([message!], neverAborted());
    acceptor.hold();
    const slow = attach(acceptor, { queueUrl, visibilityTimeoutSeconds: 1, extendEveryMs: 300 });
    await waitFor('the batch in acceptance', () => (acceptor.held() > 0 ? true : undefined));
    // The slow consumer waits in acceptance: from now on it only renews, the second one only polls.
    const renewals = countRequests(f.connection, 'ChangeMessageVisibilityBatchCommand');
    const polls = countRequests(f.connection, 'ReceiveMessageCommand');
    const second = attach(bystander, { queueUrl, visibilityTimeoutSeconds: 1 });
    await second.consumer.ready();
    // Several visibility timeouts pass while the second consumer keeps polling the queue.
    await waitFor('8 renewals and 3 polls by the second consumer', () =>
      renewals.count() >= 8 && polls.count() >= 3 ? true : undefined,
    );
    renewals.stop();
    polls.stop();
    expect(bystander.seen).toEqual([]);
    acceptor.release();
    await waitFor('settled', () => (count(slow.events, 'settled') > 0 ? true : undefined));
    expect(await acceptor.storedIds()).toEqual([message!.id]);
    expect(bystander.seen).toEqual([]);
  });

  it('dead-letters invalid messages with their reason, deletes them, and accepts the valid one', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('dead') });
    const { queueUrl: deadUrl } = await f.queues.declare({ name: uniqueName('dead-target') });
    await sendRaw(f.connection, queueUrl, '{"no":"identity"}');
    await sendRaw(f.connection, queueUrl, '{not json', { [FERRY_HEADERS.messageId]: 'unparseable-1' });
    await sendRaw(f.connection, queueUrl, JSON.stringify({ blob: 'z'.repeat(5_000) }), {
      [FERRY_HEADERS.messageId]: 'big-1',
    });
    await sendRaw(f.connection, queueUrl, '{"valid":true}', { [FERRY_HEADERS.messageId]: 'valid-1' });
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      identity: () => null,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    const dead = await receiveAtLeast(f.connection, deadUrl, 3);
    const reasons = Object.fromEntries(
      dead.map((m) => [
        m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue ?? '(no id)',
        m.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue,
      ]),
    );
    expect(reasons).toEqual({
      '(no id)': 'missing_identity',
      'unparseable-1': 'unparseable_body',
      'big-1': 'payload_too_large',
    });
    expect(
      dead.every((m) => (m.MessageAttributes?.[REJECT_DETAIL_ATTRIBUTE]?.StringValue ?? '').length > 0),
    ).toBe(true);
    await waitFor('valid one stored', async () =>
      (await acceptor.storedIds()).length >= 1 ? true : undefined,
    );
    await waitFor('4 deleted', () => (sum(events, 'settled') >= 4 ? true : undefined));
    expect(await acceptor.storedIds()).toEqual(['valid-1']);
    await consumer.close();
    expect(await receiveNone(f.connection, queueUrl)).toEqual([]);
  });

  it("leaves invalid messages to the queue's redrive policy when configured so", async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl, deadLetterQueueUrl } = await f.queues.declare({
      name: uniqueName('redrive'),
      deadLetter: { maxReceiveCount: 2 },
    });
    await sendRaw(f.connection, queueUrl, 'not json at all', { [FERRY_HEADERS.messageId]: 'poison-1' });
    const { consumer } = attach(acceptor, { queueUrl, deadLetter: { mode: 'redrive' } });
    await consumer.ready();
    const [moved] = await receiveAtLeast(f.connection, deadLetterQueueUrl!, 1);
    expect(moved!.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe('poison-1');
    expect(acceptor.seen).toEqual([]);
  });

  it("uses the SQS MessageId as identity for messages without ferry's attribute by default", async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('foreign') });
    await sendRaw(f.connection, queueUrl, '{"from":"elsewhere"}');
    const { consumer } = attach(acceptor, { queueUrl });
    await consumer.ready();
    const [stored] = await waitFor('stored', async () => {
      const ids = await acceptor.storedIds();
      return ids.length > 0 ? ids : undefined;
    });
    expect(stored).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ends a 20 s long poll on close() and is safe to close twice', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('close') });
    const { consumer } = attach(acceptor, { queueUrl, waitTimeSeconds: 20 });
    await consumer.ready();
    await consumer.close();
    await consumer.close();
    await sendRaw(f.connection, queueUrl, '{"after":"close"}', { [FERRY_HEADERS.messageId]: 'after-close' });
    expect((await receiveAtLeast(f.connection, queueUrl, 1)).length).toBe(1);
    expect(acceptor.seen).toEqual([]);
  }, 10_000);
});
