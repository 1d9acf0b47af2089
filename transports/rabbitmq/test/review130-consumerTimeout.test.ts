/**
 * Review 130: RabbitMQ's delivery acknowledgement timeout (`consumer_timeout`). A delivery not
 * acked within it makes the broker close the consumer's channel with 406 PRECONDITION_FAILED
 * ("delivery acknowledgement on channel 1 timed out"), and requeue what the channel held. Here the
 * acceptance of a delivery waits on the inbox table (locked, as by an operator's migration) past a
 * short timeout on a private node. What must hold: nothing crashes or is left unhandled, check()
 * names the lost channel, the consumer re-attaches on the same connection, and once the table is
 * free the delivery is stored once and acked (the broker holds nothing of it). Real broker (a
 * private node: the timeout is node-wide), real PostgreSQL.
 */
import amqp from 'amqplib';
import { RabbitConnection, attachRabbitConsumer, type RabbitConsumer } from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { lockTable } from '../../../test-support/rowLocks';
import { RabbitNode } from '../../../fault-tests/harness/rabbitmqNode';
import { waitFor } from './support/broker';

failOnUnhandledRejections();
jest.setTimeout(240_000);

/** The broker's acknowledgement timeout here, and how often its channels check it. */
const CONSUMER_TIMEOUT_MS = 1_000;
const TICK_MS = 200;

let node: RabbitNode | undefined;
let database: TestDatabase | undefined;

beforeAll(async () => {
  node = await RabbitNode.create();
  await node.start();
  await node.setRabbitEnv('consumer_timeout', CONSUMER_TIMEOUT_MS);
  await node.setRabbitEnv('channel_tick_interval', TICK_MS);
  database = await createTestDatabase({ migrate: false });
});

afterAll(async () => {
  await node?.dispose();
  await database?.drop();
});

test('a delivery not acked within consumer_timeout: the channel closed by the broker is re-attached, the delivery stored once and acked', async () => {
  const queue = 'review130.timeout';
  const acceptor = await PgTestAcceptor.create(database!.db);
  const connection = new RabbitConnection({
    url: node!.url,
    connectionName: 'review130-timeout',
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const errors: string[] = [];
  let consumer: RabbitConsumer | undefined;
  const admin = await amqp.connect(node!.url);
  const lock = { end: async (): Promise<void> => undefined };
  try {
    consumer = attachRabbitConsumer(acceptor, {
      connection,
      queue,
      consumer: 'billing',
      observer: (event) => {
        if (event.type === 'disconnected' && event.error !== undefined) errors.push(event.error);
      },
    });
    await consumer.ready({ timeoutMs: 60_000 });
    const model = connection.current;
    const channel = await admin.createChannel();

    lock.end = (await lockTable(database!.url, 'test_inbox')).end;
    channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
      messageId: 'slow',
      contentType: 'application/json',
    });
    await waitFor(
      'the broker to close the channel for the unacked delivery',
      () => (errors.some((error) => /PRECONDITION|timed out/i.test(error)) ? true : undefined),
      60_000,
    );
    const down = await consumer.check().then(
      () => 'up',
      (error: Error) => error.message,
    );
    // Down while it re-attaches (or already up again): its channel, never its connection, lost.
    expect(down).not.toContain('lost its connection');
    if (down !== 'up') expect(down).toContain('it lost its channel (its connection is up)');
    expect(connection.current).toBe(model);

    await lock.end();
    await waitFor('the delivery stored', async () =>
      (await acceptor.storedIds()).includes('slow') ? true : undefined,
    );
    await waitFor(
      'nothing of it left in the queue, the consumer attached',
      async () =>
        (await node!.unacknowledged(queue)) === 0 &&
        (await channel.checkQueue(queue)).messageCount === 0 &&
        (await consumer!.check().then(
          () => true,
          () => false,
        ))
          ? true
          : undefined,
      60_000,
    );
    expect(await acceptor.storedIds()).toEqual(['slow']);
    expect(connection.current).toBe(model);

    // It consumes on.
    channel.sendToQueue(queue, Buffer.from('{"n":2}'), {
      messageId: 'after',
      contentType: 'application/json',
    });
    await waitFor('the next delivery stored', async () =>
      (await acceptor.storedIds()).includes('after') ? true : undefined,
    );
    expect(await acceptor.storedIds()).toEqual(['slow', 'after']);
  } finally {
    await lock.end();
    await consumer?.close();
    await connection.close();
    await admin.close().catch(() => undefined);
  }
});
