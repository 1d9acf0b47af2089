/**
 * Dead-letter and retry names that point back at the work queue are refused when the options
 * are resolved (FERRY_CONFIG_INVALID, before connecting), with or without `declareTopology`:
 * a dead-letter queue that is the work queue used to be caught only while declaring, inside
 * the attach retry loop (ready() timed out, FERRY_TIMEOUT); a dead-letter exchange the work
 * queue is bound to was not caught at all (one delivery dead-lettered for ever).
 */
import { FerryConfigError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  RabbitConnection,
  attachRabbitConsumer,
  resolveConsumerOptions,
  deleteWorkQueue,
  type RabbitConsumer,
  type RabbitConsumerOptions,
} from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { AMQP_URL, openTestBroker, uniqueName, waitFor, type TestBroker } from './support/broker';

let database: TestDatabase;
let broker: TestBroker;
let acceptor: PgTestAcceptor;

beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  broker = await openTestBroker();
  acceptor = await PgTestAcceptor.create(database.db);
});

afterAll(async () => {
  await broker.close();
  await database.drop();
});

async function withConsumer(
  queue: string,
  options: Partial<RabbitConsumerOptions>,
  body: (attached: { refused: unknown; events: TransportConsumerEvent[] }) => Promise<void>,
): Promise<void> {
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review3') });
  const events: TransportConsumerEvent[] = [];
  let consumer: RabbitConsumer | null = null;
  let refused: unknown = null;
  try {
    consumer = attachRabbitConsumer(acceptor, {
      connection,
      queue,
      consumer: 'billing',
      retryBackoff: { initialMs: 100, maxMs: 200 },
      logger: pino({ level: 'silent' }),
      observer: (event) => events.push(event),
      ...options,
    });
    await consumer.ready({ timeoutMs: 5_000 });
  } catch (error) {
    refused = error;
  }
  try {
    await body({ refused, events });
  } finally {
    const tiers = consumer?.names.retryTiersMs;
    await consumer?.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue, ...(tiers ? { retryTiersMs: tiers } : {}) });
  }
}

test('a dead-letter queue equal to the work queue is refused at attach, not retried as an outage', async () => {
  const queue = uniqueName('review3-dlq-same');
  await withConsumer(queue, { deadLetter: { exchange: `${queue}.dlx`, queue } }, async ({ refused }) => {
    expect({ code: (refused as { code?: string } | null)?.code, message: String(refused) }).toEqual({
      code: 'FERRY_CONFIG_INVALID',
      message: expect.stringContaining('deadLetter.queue'),
    });
    expect(refused).toBeInstanceOf(FerryConfigError);
  });
  await broker.channel.deleteExchange(`${queue}.dlx`).catch(() => undefined);
});

test('a dead-letter exchange that is the exchange the work queue is bound to is refused, not looped through', async () => {
  const queue = uniqueName('review3-dlx-loop');
  const exchange = `${queue}.events`;
  await withConsumer(
    queue,
    {
      deadLetter: { exchange, queue: `${queue}.dlq` },
      bindings: [{ exchange, routingKey: '', exchangeType: 'fanout' }],
    },
    async ({ refused, events }) => {
      if (refused === null) {
        // No messageId and no identity extractor: missing_identity, dead-lettered.
        broker.channel.publish(exchange, '', Buffer.from('{"n":1}'), { contentType: 'application/json' });
        const deadLettered = () => events.filter((event) => event.type === 'dead-lettered').length;
        await waitFor('20 dead letters of one delivery', async () =>
          deadLettered() >= 20 ? true : undefined,
        ).catch(() => undefined);
        expect({ deadLettersOfOneDelivery: deadLettered() }).toEqual({ deadLettersOfOneDelivery: 1 });
      }
      expect(refused).toBeInstanceOf(FerryConfigError);
    },
  );
  await broker.channel.deleteExchange(exchange).catch(() => undefined);
});

describe('names that would send a copy back into the work queue, declareTopology on or off', () => {
  const base = { connection: AMQP_URL, consumer: 'billing', queue: 'orders' };
  test.each([
    ['deadLetter.queue', { deadLetter: { queue: 'orders' } }],
    ['deadLetter.queue', { deadLetter: { queue: 'orders.retry.1000ms' } }],
    ['retryQueue', { queue: 'orders.1000ms', retryQueue: 'orders' }],
    [
      'deadLetter.exchange',
      { deadLetter: { exchange: 'events' }, bindings: [{ exchange: 'events', routingKey: '#' }] },
    ],
  ] as const)('%s: %j', (option, names) => {
    for (const declareTopology of [true, false]) {
      let refused: unknown = null;
      try {
        resolveConsumerOptions({ ...base, ...names, declareTopology }, 1_000);
      } catch (error) {
        refused = error;
      }
      expect({ declareTopology, refused }).toEqual({
        declareTopology,
        refused: expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option }),
      });
    }
  });

  test('a dead-letter exchange bound elsewhere, and the default names, are accepted', () => {
    const resolved = resolveConsumerOptions(
      {
        ...base,
        deadLetter: { exchange: 'orders.dead' },
        bindings: [{ exchange: 'events', routingKey: '#' }],
      },
      1_000,
    );
    expect(resolved.names.deadLetterExchange).toBe('orders.dead');
    expect(resolveConsumerOptions(base, 1_000).names.deadLetterQueue).toBe('orders.dlq');
  });
});
