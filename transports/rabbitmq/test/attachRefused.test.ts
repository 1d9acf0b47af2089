/**
 * Attaching to a broker that refuses the consumer: ready() says why at once (a refusal only an
 * operator can fix) or names the last failure in its timeout, and the consumer keeps trying, so
 * it attaches once the operator fixed the cause.
 */
import { FerryError } from '@ferry/core';
import { RabbitConnection, attachRabbitConsumer, type RabbitConsumer } from '@ferry/rabbitmq';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

const fixture = useConsumerFixture();

async function readyError(consumer: RabbitConsumer, timeoutMs: number): Promise<FerryError> {
  const error = await consumer.ready({ timeoutMs }).then(
    () => new Error('ready() resolved'),
    (rejection: unknown) => rejection,
  );
  if (!(error instanceof FerryError)) throw error;
  return error;
}

function attach(options: { declareTopology?: boolean; connection?: RabbitConnection } = {}): RabbitConsumer {
  fixture.consumer = attachRabbitConsumer(fixture.acceptor, {
    connection: options.connection ?? fixture.connection,
    queue: fixture.queue,
    consumer: 'billing',
    ...(options.declareTopology === undefined ? {} : { declareTopology: options.declareTopology }),
  });
  return fixture.consumer;
}

describe('attachRabbitConsumer refused by the broker', () => {
  test.each([
    ['a classic queue without a dead-letter exchange', {}],
    ['a quorum queue', { 'x-queue-type': 'quorum' }],
  ])(
    'an existing queue declared with other arguments (%s): ready() rejects at once with FERRY_PERMANENT_FAILURE naming declareTopology, not after its timeout',
    async (_kind, args) => {
      await fixture.broker.channel.assertQueue(fixture.queue, { durable: true, arguments: args });

      const error = await readyError(attach(), 60_000);

      expect([error.code, error.retriable]).toEqual(['FERRY_PERMANENT_FAILURE', false]);
      expect(error.message).toMatch(/PRECONDITION.FAILED/);
      expect(error.message).toContain('declareTopology: false');
    },
  );

  test('with declareTopology: false the same queue is consumed as it was declared', async () => {
    await fixture.broker.channel.assertQueue(fixture.queue, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum' },
    });
    fixture.broker.channel.sendToQueue(fixture.queue, Buffer.from('{"n":1}'), { messageId: 'existing-1' });

    await attach({ declareTopology: false }).ready({ timeoutMs: 20_000 });

    await fixture.expectStoredOnce(['existing-1']);
  });

  test('a refused consumer keeps trying: once the operator removed the conflicting queue it declares its own and consumes', async () => {
    await fixture.broker.channel.assertQueue(fixture.queue, { durable: true });
    const consumer = attach();
    expect((await readyError(consumer, 60_000)).code).toBe('FERRY_PERMANENT_FAILURE');

    await fixture.broker.channel.deleteQueue(fixture.queue);
    // ready() reports the refusal until the consumer's next attempt succeeds.
    await waitFor('attached after the fix', () =>
      consumer.ready({ timeoutMs: 1_000 }).then(
        () => true,
        () => undefined,
      ),
    );
    fixture.broker.channel.sendToQueue(fixture.queue, Buffer.from('{"n":1}'), { messageId: 'after-fix' });
    await fixture.expectStoredOnce(['after-fix']);
  });

  test('credentials the broker refuses: ready() rejects at once with FERRY_PERMANENT_FAILURE (403 ACCESS_REFUSED)', async () => {
    const url = new URL(AMQP_URL);
    url.password = 'not-the-password';
    const connection = new RabbitConnection({ url: url.toString(), connectionName: uniqueName('refused') });
    try {
      const error = await readyError(attach({ connection }), 60_000);
      expect(error.code).toBe('FERRY_PERMANENT_FAILURE');
      expect(error.message).toMatch(/403|ACCESS.REFUSED/);
    } finally {
      await fixture.consumer?.close();
      fixture.consumer = null;
      await connection.close();
    }
  });

  test("an unreachable broker: ready()'s FERRY_TIMEOUT names the last failure", async () => {
    const connection = new RabbitConnection({
      url: 'amqp://guest:guest@127.0.0.1:1',
      connectionName: uniqueName('unreachable'),
    });
    try {
      const error = await readyError(attach({ connection }), 1_000);
      expect(error.code).toBe('FERRY_TIMEOUT');
      expect(error.message).toMatch(/ECONNREFUSED/);
    } finally {
      await fixture.consumer?.close();
      fixture.consumer = null;
      await connection.close();
    }
  });
});
