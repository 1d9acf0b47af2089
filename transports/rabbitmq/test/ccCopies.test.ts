/**
 * Review finding (failed first; 956de6c, the `mandatory` copies of batch.ts): copyHeaders keeps a delivery's
 * `CC` header (it drops only x-death). RabbitMQ reads CC at publish time (sender-selected
 * distribution) and routes the copy to each CC routing key as well, on the copy's exchange. The
 * retry copy goes to the default exchange, so CC ["x"] delivers it to the queue named "x":
 * - the copy is routed, so it is never returned: `mandatory` no longer tells ferry that the
 *   tier queue does not exist, the copy is `confirmed`, the delivery acked, and the message is
 *   in another application's queue instead of the inbox (the returns fix is bypassed);
 * - with the tier queue present, every retry (and dead-letter) copy also lands in the CC
 *   queues: duplicates to whoever the original sender named, on an exchange it never chose.
 * A sender used CC on its own exchange (a legitimate AMQP feature); ferry must not replay it on
 * the default exchange or the dead-letter exchange. Fix: strip CC and BCC in copyHeaders.
 */
import { FerryError, type InboxAcceptInput, type InboxAcceptResult, type InboxAcceptor } from '@ferry/core';
import { RabbitConnection, attachRabbitConsumer, declareWorkQueue, deleteWorkQueue } from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { AMQP_URL, openTestBroker, uniqueName, waitFor, type TestBroker } from './support/broker';

let database: TestDatabase;
let broker: TestBroker;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  broker = await openTestBroker();
});

afterAll(async () => {
  await broker.close();
  await database.drop();
});

/** Fails the first call with a retriable error that is not an outage (goes round the retry tiers). */
class FailOnce implements InboxAcceptor {
  calls = 0;
  constructor(private readonly inner: PgTestAcceptor) {}
  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.calls += 1;
    if (this.calls === 1) throw new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown');
    return this.inner.acceptMany(inputs);
  }
}

test('a retry copy of a delivery with a CC header goes to the tier only, and a missing tier is still noticed', async () => {
  const inner = await PgTestAcceptor.create(database.db);
  const acceptor = new FailOnce(inner);
  const queue = uniqueName('review6-cc');
  const victim = uniqueName('review6-cc-victim');
  // The operator's tiers differ from the application's (as in unroutableCopy.test.ts).
  await declareWorkQueue(broker.channel, { queue, retryTiersMs: [100, 200] });
  // Published with CC naming a key no queue had then: the original reaches only `queue`.
  broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
    messageId: 'm-cc',
    contentType: 'application/json',
    headers: { CC: [victim] },
  });
  await broker.channel.assertQueue(victim, { durable: false, autoDelete: false });
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review6') });
  const consumer = attachRabbitConsumer(acceptor, {
    connection,
    queue,
    consumer: 'billing',
    declareTopology: false,
    logger: pino({ level: 'silent' }),
  });
  try {
    await consumer.ready({ timeoutMs: 20_000 });
    await waitFor(
      'the delivery to be stored, or to land in the CC queue',
      async () =>
        (await inner.storedIds()).length > 0 || (await broker.readyCount(victim)) > 0 ? true : undefined,
      60_000,
    );
    // On main: { stored: 0, victim: 1 }: the copy was routed by CC, confirmed, the delivery acked.
    expect({ stored: (await inner.storedIds()).length, victim: await broker.readyCount(victim) }).toEqual({
      stored: 1,
      victim: 0,
    });
  } finally {
    const tiers = consumer.names.retryTiersMs;
    await consumer.close();
    await connection.close();
    await broker.channel.deleteQueue(victim).catch(() => undefined);
    await deleteWorkQueue(broker.channel, { queue, retryTiersMs: [100, 200] });
    await deleteWorkQueue(broker.channel, { queue, retryTiersMs: tiers }).catch(() => undefined);
  }
}, 90_000);
