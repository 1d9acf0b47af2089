import { FerryConfigError } from '@ferry/core';
import { RabbitConnection, RabbitPublisher, attachRabbitConsumer } from '@ferry/rabbitmq';

const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

describe('option resolution', () => {
  it('rejects a bad option with a FerryConfigError naming it, before connecting', () => {
    const attempts: [string, () => unknown][] = [
      ['url', () => new RabbitConnection({ url: 'http://nope' })],
      [
        'reconnect.multiplier',
        () => new RabbitConnection({ url: 'amqp://x', reconnect: { multiplier: 0.5 } }),
      ],
      ['confirmTimeoutMs', () => new RabbitPublisher({ connection: 'amqp://x', confirmTimeoutMs: 0 })],
      [
        'prefetch',
        () =>
          attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: 'q', consumer: 'c', prefetch: 0 }),
      ],
      [
        'consumer',
        () => attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: 'q', consumer: '' }),
      ],
      ['queue', () => attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: '', consumer: 'c' })],
    ];
    for (const [option, attempt] of attempts) {
      let thrown: unknown;
      try {
        attempt();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(FerryConfigError);
      expect((thrown as FerryConfigError).option).toBe(option);
    }
  });

  it('closes a connection that never connected, twice, without error', async () => {
    const connection = new RabbitConnection({ url: 'amqp://127.0.0.1:1' });
    await connection.close();
    await connection.close();
    await expect(connection.connect()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });
});
