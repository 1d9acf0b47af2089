/**
 * Review finding (failed first), review 88. A binding's `exchangeType` was one of topic, direct,
 * fanout and headers: a work queue bound to an exchange of a type a plugin registers
 * (`x-consistent-hash`, `x-delayed-message`, `x-random`, `x-recent-history`, `x-jms-topic`, …),
 * which RabbitMQ accepts once its plugin is enabled, was refused as a configuration error, and
 * such a topology could not be declared by ferry at all. Any `x-` type is now taken (a name: at
 * most 255 UTF-8 bytes), with the exchange's arguments (`exchangeArguments`, e.g. the
 * `x-delayed-type` x-delayed-message requires); a type no plugin of the broker registers is
 * refused by RabbitMQ (503 COMMAND_INVALID "unknown exchange type", closing the connection), and
 * ready() rejects at once with FERRY_PERMANENT_FAILURE naming the type and the missing plugin,
 * never waiting for its timeout. The broker here runs without the plugins: the refusal is real.
 */
import { FerryConfigError, FerryError } from '@ferry/core';
import {
  attachRabbitConsumer,
  workQueueNames,
  type ExchangeType,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import { uniqueName } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

const fixture = useConsumerFixture();

async function readyError(consumer: RabbitConsumer, timeoutMs: number): Promise<unknown> {
  return consumer.ready({ timeoutMs }).then(
    () => new Error('ready() resolved'),
    (rejection: unknown) => rejection,
  );
}

describe('a binding to an exchange of a type a plugin registers', () => {
  test.each<ExchangeType>([
    'x-consistent-hash',
    'x-delayed-message',
    'x-random',
    'x-recent-history',
    'x-jms-topic',
  ])('%s is taken as an exchange type', (exchangeType) => {
    const bindings = [{ exchange: 'plugged', routingKey: '1', exchangeType }] as const;
    expect(() => workQueueNames({ queue: 'work', bindings })).not.toThrow();
  });

  test.each([
    ['no x- prefix', 'consistent-hash'],
    ['x- alone', 'x-'],
    ['over 255 bytes', `x-${'é'.repeat(127)}`],
    ['not a string', 7],
  ])('a type that can be no exchange type (%s) is FERRY_CONFIG_INVALID naming the option', (_why, type) => {
    const bindings = [{ exchange: 'plugged', routingKey: '1', exchangeType: type }];
    expect(() => workQueueNames({ queue: 'work', bindings } as never)).toThrow(FerryConfigError);
    expect(() => workQueueNames({ queue: 'work', bindings } as never)).toThrow(/bindings\[0\]\.exchangeType/);
  });

  test('exchangeArguments are taken as an object of names to strings, finite numbers and booleans', () => {
    const binding = (exchangeArguments: unknown) => ({
      queue: 'work',
      bindings: [
        { exchange: 'delayed', routingKey: 'k', exchangeType: 'x-delayed-message', exchangeArguments },
      ],
    });
    expect(() =>
      workQueueNames(binding({ 'x-delayed-type': 'topic', weight: 2, on: true }) as never),
    ).not.toThrow();
    for (const bad of [null, [], 'topic', { 'x-delayed-type': {} }, { n: Number.NaN }]) {
      expect(() => workQueueNames(binding(bad) as never)).toThrow(/bindings\[0\]\.exchangeArguments/);
    }
  });

  test('a type the broker has no plugin for: ready() rejects at once with FERRY_PERMANENT_FAILURE naming the type and the plugin', async () => {
    const exchange = uniqueName('hash');
    fixture.consumer = attachRabbitConsumer(fixture.acceptor, {
      connection: fixture.connection,
      queue: fixture.queue,
      consumer: 'billing',
      bindings: [{ exchange, routingKey: '1', exchangeType: 'x-consistent-hash' }],
    });
    const error = await readyError(fixture.consumer, 60_000);
    expect(error).toBeInstanceOf(FerryError);
    const refusal = error as FerryError;
    expect([refusal.code, refusal.retriable]).toEqual(['FERRY_PERMANENT_FAILURE', false]);
    expect(refusal.message).toMatch(/unknown exchange type 'x-consistent-hash'/);
    expect(refusal.message).toMatch(/plugin/);
  }, 90_000);
});
