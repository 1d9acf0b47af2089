/**
 * Review 64: @ferry/testing's in-memory broker, publisher and consumer promise to behave like
 * ferry's real transports where it matters. Each case below is a place where a relay or handler
 * test passing on them would behave otherwise in production (RabbitMQ compared live), or where
 * the in-memory helpers' own API misbehaves.
 */
import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import {
  FERRY_HEADERS,
  createInbox,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { RabbitConnection, RabbitPublisher, attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import { InMemoryBroker, InMemoryPublisher, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outboxMessageFixture } from '../src/conformance/messages';

const AMQP_URL = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

function uniqueName(prefix: string): string {
  return `ferry_t_review64_${prefix}_${randomBytes(4).toString('hex')}`;
}

function statuses(outcomes: readonly PublishOutcome[]): Record<string, string> {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.id, outcome.status]));
}

/** Publishes `messages` on a RabbitPublisher of its own (a real broker), then closes it. */
async function publishOnRabbit(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
  const publisher = new RabbitPublisher(AMQP_URL, { confirmTimeoutMs: 10_000 });
  try {
    return await publisher.publish(messages, new AbortController().signal);
  } finally {
    await publisher.close();
  }
}

/** A queue of the real RabbitMQ for the duration of `body`. */
async function withRabbitQueue<T>(body: (queue: string) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createChannel();
  const queue = uniqueName('q');
  await channel.assertQueue(queue, { durable: false, autoDelete: false });
  try {
    return await body(queue);
  } finally {
    await channel.deleteQueue(queue).catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}

describe('review 64: the in-memory publisher against the real publishers', () => {
  test('an event with no destination is permanent, as on RabbitMQ (Kafka and SQS alike), not retried until FAILED', async () => {
    // RabbitMQ, live: no destination, no route, no default = permanent (one attempt, FAILED at once).
    const real = outboxMessageFixture({ destination: null });
    expect(await publishOnRabbit([real])).toEqual([
      expect.objectContaining({ id: real.id, status: 'permanent' }),
    ]);
    // The in-memory broker's publisher reports it retryable ("no queue named null"): a relay test
    // sees the event retried with backoff maxRetries times where production fails it at once.
    const broker = new InMemoryBroker();
    const memory = outboxMessageFixture({ destination: null });
    expect(await broker.publisher().publish([memory], new AbortController().signal)).toEqual([
      expect.objectContaining({ id: memory.id, status: 'permanent' }),
    ]);
  });

  test('once a message of an ordering key is not sent, the later messages of that key in the call are not sent either (RabbitMQ live)', async () => {
    await withRabbitQueue(async (queue) => {
      const key = 'order-1';
      const first = outboxMessageFixture({ destination: uniqueName('missing_exchange'), orderingKey: key });
      const second = outboxMessageFixture({ destination: `/${queue}`, orderingKey: key });
      const real = statuses(await publishOnRabbit([first, second]));
      expect(real[first.id]).not.toBe('sent');
      expect(real[second.id]).not.toBe('sent'); // held behind its key's first message
    });
    // In memory: the first message's queue does not exist (retryable), the second is delivered
    // ahead of it, so a consumer sees the key's events out of order.
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    const key = 'order-1';
    const first = outboxMessageFixture({ destination: 'no-such-queue', orderingKey: key });
    const second = outboxMessageFixture({ destination: 'orders', orderingKey: key });
    const memory = statuses(await broker.publisher().publish([first, second], new AbortController().signal));
    expect(memory[first.id]).toBe('retryable');
    expect({ second: memory[second.id], held: broker.held('orders') }).toEqual({
      second: 'retryable',
      held: 0,
    });
  });

  test('once close() resolved nothing more is published: the rest of a publish in flight is unavailable "publisher is closed"', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    const publisher = broker.publisher();
    const messages = Array.from({ length: 20 }, (_, n) =>
      outboxMessageFixture({ destination: 'orders', payload: { n } }),
    );
    const publishing = publisher.publish(messages, new AbortController().signal);
    await publisher.close();
    const heldWhenClosed = broker.held('orders');
    const outcomes = await publishing;
    // RabbitPublisher (review 60): "close() returned: nothing more goes out". Here the call goes on
    // putting messages on the queue after close() resolved.
    expect(broker.held('orders')).toBe(heldWhenClosed);
    expect(outcomes.filter((outcome) => outcome.status === 'sent')).toHaveLength(heldWhenClosed);
  });

  test("names its messaging system, as every ferry publisher does (the consumer names 'memory')", () => {
    // The relay's publish spans carry `messaging.system` from publisher.system (RabbitPublisher:
    // 'rabbitmq', KafkaPublisher: 'kafka', SqsPublisher: 'aws_sqs').
    const publishers: Publisher[] = [new InMemoryBroker().publisher(), new InMemoryPublisher()];
    expect(publishers.map((publisher) => publisher.system)).toEqual(['memory', 'memory']);
  });
});

describe('review 64: the API of the in-memory helpers', () => {
  test("send() keeps what was sent: changing the caller's buffer or headers afterwards changes no delivery", () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    const body = Buffer.from(JSON.stringify({ orderId: 'o-1' }));
    const headers: Record<string, string> = { 'x-ferry-message-id': 'm-1', 'x-ferry-tenant-id': 'acme' };
    expect(broker.send('orders', { body, headers })).toBe(true);
    // The caller reuses its buffer and headers for the next message, as a real broker's client
    // allows (the bytes were copied onto the wire at publish).
    body.write(JSON.stringify({ orderId: 'o-2' }));
    headers['x-ferry-tenant-id'] = 'other';
    const [taken] = broker.take('orders', 1);
    expect(taken?.delivery.body.toString()).toBe(JSON.stringify({ orderId: 'o-1' }));
    expect(taken?.delivery.headers['x-ferry-tenant-id']).toBe('acme');
  });
  test('delivered is the record of what was sent, in order: sorting what it returns does not reorder the record', async () => {
    const publisher = new InMemoryPublisher();
    const second = outboxMessageFixture({ id: 'b-second-in-the-alphabet' });
    const first = outboxMessageFixture({ id: 'a-first-in-the-alphabet' });
    await publisher.publish([second, first], new AbortController().signal);
    // A test compares the ids order-insensitively, as tests do ...
    const ids = publisher.delivered.sort((x, y) => x.id.localeCompare(y.id)).map((message) => message.id);
    expect(ids).toEqual([first.id, second.id]);
    // ... and a later assertion on the delivery order reads the publisher's own list, sorted in
    // place (broker.deadLetters() returns a copy; attempts and delivered are the internals).
    expect(publisher.delivered.map((message) => message.id)).toEqual([second.id, first.id]);
  });
});

describe('review 64: the in-memory consumer against the RabbitMQ consumer', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    // A database error of unknown cause (an application trigger, SQLSTATE P0001) for one message
    // only: ferry's inbox reports it as a retriable FERRY_DATABASE_ERROR, so a batch holding only
    // that message fails whole and goes round the transport's retry.
    await database.db.execute(`CREATE FUNCTION review64_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.message_id LIKE 'poison-%' THEN RAISE EXCEPTION 'review64 refuses %', NEW.message_id; END IF;
        RETURN NEW;
      END $$`);
    await database.db.execute(`CREATE TRIGGER review64_refuse BEFORE INSERT ON ferry_inbox_receipts
      FOR EACH ROW EXECUTE FUNCTION review64_refuse()`);
  });

  afterAll(async () => {
    await database.drop();
  });

  test('a delivery whose acceptance keeps failing with a retriable database error is dead-lettered once the transport retries are spent, as on RabbitMQ, not offered again for ever', async () => {
    const inbox = createInbox(database.prisma, {
      global: 'shared',
      handlers: { projection: async () => {} },
    });
    const body = Buffer.from(JSON.stringify({ orderId: 'o-1' }));
    try {
      // RabbitMQ, live: after maxTransportRetries trips through the retry tier it is dead-lettered
      // (transport_retries_exhausted), and the queue goes on.
      const queue = uniqueName('work');
      const topology = { queue, retryTiersMs: [100] };
      const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('consumer') });
      const admin = await amqp.connect(AMQP_URL);
      const channel = await admin.createChannel();
      const rabbit = attachRabbitConsumer(inbox, {
        connection,
        queue,
        consumer: 'projection',
        maxTransportRetries: 1,
        retryBackoff: { initialMs: 100, maxMs: 100 },
        retryTiersMs: [100],
      });
      try {
        await rabbit.ready({ timeoutMs: 30_000 });
        const id = `poison-${randomBytes(4).toString('hex')}`;
        channel.sendToQueue(queue, body, { headers: { [FERRY_HEADERS.messageId]: id } });
        const deadLetter = await waitUntil(
          'the RabbitMQ dead letter',
          async () => (await channel.get(`${queue}.dlq`, { noAck: true })) || undefined,
          { timeoutMs: 30_000 },
        );
        expect(deadLetter.properties.headers?.[FERRY_HEADERS.rejectReason]).toBe(
          'transport_retries_exhausted',
        );
      } finally {
        await rabbit.close();
        await deleteWorkQueue(channel, topology).catch(() => undefined);
        await admin.close().catch(() => undefined);
        await connection.close();
      }

      // In memory (as review 64 found it): the same delivery was offered again after each failure
      // for as long as the test ran, never dead-lettered (RabbitMQ's default maxTransportRetries
      // is 5: we let it fail 8 times). Now it takes a transport retry of its own each time, as on
      // RabbitMQ, and is dead-lettered once they are spent.
      const broker = new InMemoryBroker();
      broker.declareQueue('orders');
      let failures = 0;
      const memory = attachInMemoryConsumer(inbox, {
        broker,
        queue: 'orders',
        consumer: 'projection',
        retryBackoff: { initialMs: 1, maxMs: 10 },
        observer: (event) => {
          if (event.type === 'acceptance-failed') failures += 1;
        },
      });
      try {
        const id = `poison-${randomBytes(4).toString('hex')}`;
        broker.send('orders', { body, headers: { [FERRY_HEADERS.messageId]: id } });
        await waitUntil(
          '8 failed acceptances or a dead letter',
          () => failures >= 8 || broker.deadLetters('orders').length > 0,
          {
            timeoutMs: 30_000,
          },
        );
        expect(broker.deadLetters('orders').map((letter) => letter.reason)).toEqual([
          'transport_retries_exhausted',
        ]);
      } finally {
        await memory.close();
      }
    } finally {
      await inbox.close();
    }
  });
});
