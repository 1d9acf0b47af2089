import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS } from '@ferry/core';
import {
  REJECT_DETAIL_ATTRIBUTE,
  SqsPublisher,
  attachSqsConsumer,
  type AttachConsumerOptions,
  type SqsConnection,
  type SqsConsumer,
  type SqsConsumerEvent,
} from '@ferry/sqs';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  receiveNone,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';

describe('SQS consumer feeding a PostgreSQL inbox', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  const consumers: SqsConsumer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  async function freshAcceptor(): Promise<PgTestAcceptor> {
    await database.db.execute('DROP TABLE IF EXISTS test_inbox');
    await database.db.execute('DROP TABLE IF EXISTS test_switch');
    return PgTestAcceptor.create(database.db);
  }

  function attach(
    acceptor: PgTestAcceptor,
    options: Omit<AttachConsumerOptions, 'connection' | 'consumer'> & { consumer?: string },
  ): { consumer: SqsConsumer; events: SqsConsumerEvent[] } {
    const events: SqsConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection,
      consumer: 'orders',
      waitTimeSeconds: 1,
      retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
      observer: (event) => events.push(event),
      ...options,
    });
    consumers.push(consumer);
    return { consumer, events };
  }

  const count = (events: SqsConsumerEvent[], kind: SqsConsumerEvent['kind']) =>
    events.filter((e) => e.kind === kind).length;

  it('round-trips published events into the inbox once each, duplicates included, and empties the queue', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: uniqueName('trip') });
    const publisher = new SqsPublisher(connection);
    const messages = outboxMessages(30, queueUrl, { correlationId: 'corr-7', headers: { 'x-app': 'shop' } });
    expect((await publisher.publish(messages, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    // The relay published 10 of them again (lost confirmation): SQS now holds 40 messages.
    await publisher.publish(messages.slice(0, 10), neverAborted());
    const { consumer, events } = attach(acceptor, { queueUrl });
    await consumer.ready();

    await waitFor('40 deliveries offered and deleted', () =>
      acceptor.seen.length >= 40 &&
      events
        .filter((e) => e.kind === 'deleted')
        .reduce((n, e) => n + (e.kind === 'deleted' ? e.count : 0), 0) >= 40
        ? true
        : undefined,
    );
    const stored = await acceptor.stored();
    expect(stored.map((row) => row.messageId).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(stored[0]).toMatchObject({ tenantId: 'tenant-a', type: 'order.placed' });
    expect(stored[0]!.headers).toMatchObject({ 'x-app': 'shop', [FERRY_HEADERS.correlationId]: 'corr-7' });
    await consumer.close();
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });

  it('accepts FIFO messages of one group in publish order', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: `${uniqueName('order')}.fifo` });
    const messages = outboxMessages(25, queueUrl, { orderingKey: 'customer-9' });
    await new SqsPublisher(connection).publish(messages, neverAborted());
    const { consumer } = attach(acceptor, { queueUrl });
    await consumer.ready();
    await waitFor('25 stored', async () => ((await acceptor.storedIds()).length >= 25 ? true : undefined));
    expect(await acceptor.storedIds()).toEqual(messages.map((m) => m.id));
  });

  it('does not delete a batch whose acceptance failed; it comes back after the backoff and is accepted once', async () => {
    const acceptor = await freshAcceptor();
    await acceptor.refuse(true);
    const { queueUrl } = await queues.declare({ name: uniqueName('refuse') });
    const messages = outboxMessages(3, queueUrl);
    await new SqsPublisher(connection).publish(messages, neverAborted());
    const { consumer, events } = attach(acceptor, { queueUrl });
    await consumer.ready();

    await waitFor('two refused receives', () => (count(events, 'acceptance_failed') >= 2 ? true : undefined));
    expect(count(events, 'deleted')).toBe(0);
    const failure = events.find((e) => e.kind === 'acceptance_failed');
    expect(failure).toMatchObject({
      visibilitySeconds: 1,
      error: expect.objectContaining({ retriable: true }),
    });
    await acceptor.refuse(false);
    await waitFor('3 stored', async () => ((await acceptor.storedIds()).length >= 3 ? true : undefined));
    await waitFor('deleted', () => (count(events, 'deleted') > 0 ? true : undefined));
    expect((await acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
    const offeredOf = (id: string) => acceptor.seen.filter((offered) => offered === id).length;
    expect(messages.every((m) => offeredOf(m.id) >= 3)).toBe(true);
  });

  it('keeps a batch invisible to a second consumer while a slow acceptance runs past the visibility timeout', async () => {
    const acceptor = await freshAcceptor();
    const bystander = await PgTestAcceptor.create(database.db);
    const { queueUrl } = await queues.declare({ name: uniqueName('slow') });
    const [message] = outboxMessages(1, queueUrl);
    await new SqsPublisher(connection).publish([message!], neverAborted());
    acceptor.hold();
    const slow = attach(acceptor, { queueUrl, visibilityTimeoutSeconds: 1, extendEveryMs: 300 });
    await waitFor('the batch in acceptance', () => (acceptor.held() > 0 ? true : undefined));
    const second = attach(bystander, { queueUrl, visibilityTimeoutSeconds: 1 });
    await second.consumer.ready();
    // Several visibility timeouts pass while the second consumer keeps polling the queue.
    await waitFor('8 renewals and 3 polls by the second consumer', () =>
      count(slow.events, 'visibility_extended') >= 8 && count(second.events, 'polled') >= 3
        ? true
        : undefined,
    );
    expect(bystander.seen).toEqual([]);
    acceptor.release();
    await waitFor('deleted', () => (count(slow.events, 'deleted') > 0 ? true : undefined));
    expect(await acceptor.storedIds()).toEqual([message!.id]);
    expect(bystander.seen).toEqual([]);
  });

  it('dead-letters invalid messages with their reason, deletes them, and accepts the valid one', async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: uniqueName('dead') });
    const { queueUrl: deadUrl } = await queues.declare({ name: uniqueName('dead-target') });
    await sendRaw(connection, queueUrl, '{"no":"identity"}');
    await sendRaw(connection, queueUrl, '{not json', { [FERRY_HEADERS.messageId]: 'unparseable-1' });
    await sendRaw(connection, queueUrl, JSON.stringify({ blob: 'z'.repeat(5_000) }), {
      [FERRY_HEADERS.messageId]: 'big-1',
    });
    await sendRaw(connection, queueUrl, '{"valid":true}', { [FERRY_HEADERS.messageId]: 'valid-1' });
    const { consumer, events } = attach(acceptor, {
      queueUrl,
      identity: () => null,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
    });
    await consumer.ready();

    const dead = await receiveAtLeast(connection, deadUrl, 3);
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
    await waitFor('4 deleted', () =>
      events.reduce((n, e) => n + (e.kind === 'deleted' ? e.count : 0), 0) >= 4 ? true : undefined,
    );
    expect(await acceptor.storedIds()).toEqual(['valid-1']);
    await consumer.close();
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });

  it("leaves invalid messages to the queue's redrive policy when configured so", async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl, deadLetterQueueUrl } = await queues.declare({
      name: uniqueName('redrive'),
      deadLetter: { maxReceiveCount: 2 },
    });
    await sendRaw(connection, queueUrl, 'not json at all', { [FERRY_HEADERS.messageId]: 'poison-1' });
    const { consumer } = attach(acceptor, { queueUrl, deadLetter: { mode: 'redrive' } });
    await consumer.ready();
    const [moved] = await receiveAtLeast(connection, deadLetterQueueUrl!, 1);
    expect(moved!.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe('poison-1');
    expect(acceptor.seen).toEqual([]);
  });

  it("uses the SQS MessageId as identity for messages without ferry's attribute by default", async () => {
    const acceptor = await freshAcceptor();
    const { queueUrl } = await queues.declare({ name: uniqueName('foreign') });
    await sendRaw(connection, queueUrl, '{"from":"elsewhere"}');
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
    const { queueUrl } = await queues.declare({ name: uniqueName('close') });
    const { consumer } = attach(acceptor, { queueUrl, waitTimeSeconds: 20 });
    await consumer.ready();
    await consumer.close();
    await consumer.close();
    await sendRaw(connection, queueUrl, '{"after":"close"}', { [FERRY_HEADERS.messageId]: 'after-close' });
    expect((await receiveAtLeast(connection, queueUrl, 1)).length).toBe(1);
    expect(acceptor.seen).toEqual([]);
  }, 10_000);
});
