import { FerryConfigError } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  resolveConsumerOptions,
} from '@ferry/rabbitmq';

const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

/** Expects `attempt` to throw FERRY_CONFIG_INVALID naming `option`, its message showing `shown`. */
function expectConfigError(attempt: () => unknown, option: string, shown: string): void {
  expect(attempt).toThrow(
    expect.objectContaining({
      code: 'FERRY_CONFIG_INVALID',
      option,
      message: expect.stringContaining(shown),
    }),
  );
}

describe('option resolution', () => {
  it('rejects a bad option with a FerryConfigError naming it, before connecting', () => {
    const attempts: [string, () => unknown][] = [
      ['url', () => new RabbitConnection({ url: 'http://nope' })],
      [
        'reconnectBackoff.multiplier',
        () => new RabbitConnection({ url: 'amqp://x', reconnectBackoff: { multiplier: 0.5 } }),
      ],
      ['confirmTimeoutMs', () => new RabbitPublisher('amqp://x', { confirmTimeoutMs: 0 })],
      [
        'prefetch',
        () =>
          attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: 'q', consumer: 'c', prefetch: 0 }),
      ],
      [
        'maxBatchesInFlight',
        () =>
          attachRabbitConsumer(acceptor, {
            connection: 'amqp://x',
            queue: 'q',
            consumer: 'c',
            maxBatchesInFlight: 0,
          }),
      ],
      [
        'consumer',
        () => attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: 'q', consumer: '' }),
      ],
      ['queue', () => attachRabbitConsumer(acceptor, { connection: 'amqp://x', queue: '', consumer: 'c' })],
      [
        'deadLetter.exhange',
        () =>
          attachRabbitConsumer(acceptor, {
            connection: 'amqp://x',
            queue: 'q',
            consumer: 'c',
            deadLetter: { exhange: 'x' } as never,
          }),
      ],
      ['defaultExchange', () => new RabbitPublisher('amqp://x', { defaultExchange: 'x' } as never)],
    ];
    // Review finding (failed first): a fixed tenant acceptance refuses (too long, a NUL) attached,
    // and every message of the queue was then dead-lettered as invalid.
    for (const fixed of ['x'.repeat(256), 'acme\u0000']) {
      attempts.push([
        'tenant.fixed',
        () =>
          attachRabbitConsumer(acceptor, {
            connection: 'amqp://x',
            queue: 'q',
            consumer: 'c',
            tenant: { fixed },
          }),
      ]);
    }
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

  it('tells a migrating user the option that replaced a retired one, on the connection, consumer and publisher', () => {
    const retired: [string, RegExp, () => unknown][] = [
      [
        'defaultExchange',
        /renamed to defaultDestination/,
        () => new RabbitPublisher('amqp://x', { defaultExchange: 'x' } as never),
      ],
      [
        'reconnect',
        /renamed to reconnectBackoff/,
        () => new RabbitConnection({ url: 'amqp://x', reconnect: {} } as never),
      ],
      [
        'deadLetterExchange',
        /renamed to deadLetter\.exchange/,
        () =>
          attachRabbitConsumer(acceptor, {
            connection: 'amqp://x',
            queue: 'q',
            consumer: 'c',
            deadLetterExchange: 'dead',
          } as never),
      ],
      // The publisher took one object before: new RabbitPublisher({ connection, routes }).
      [
        'connection',
        /new RabbitPublisher\(connection, options\)/,
        () => new RabbitPublisher({ connection: 'amqp://x', routes: {} } as never),
      ],
    ];
    for (const [option, replacement, attempt] of retired) {
      expect(attempt).toThrow(FerryConfigError);
      expect(attempt).toThrow(
        expect.objectContaining({ option, message: expect.stringMatching(replacement) }),
      );
    }
  });

  it('bounds the bodies a consumer reads: maxBodyBytes a positive safe integer, by default 16 × maxPayloadBytes, at least 1 MiB', () => {
    const resolve = (options: { maxBodyBytes?: unknown; maxPayloadBytes?: number }, acceptorLimit = 1024) =>
      resolveConsumerOptions(
        { connection: 'amqp://x', queue: 'q', consumer: 'c', ...(options as { maxBodyBytes?: number }) },
        acceptorLimit,
      ).maxBodyBytes;
    for (const invalid of [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '1048576']) {
      expectConfigError(() => resolve({ maxBodyBytes: invalid }), 'maxBodyBytes', 'must be an integer');
    }
    expect(resolve({ maxBodyBytes: 1 })).toBe(1);
    expect(resolve({})).toBe(1_048_576);
    expect(resolve({}, 262_144)).toBe(4_194_304);
    expect(resolve({ maxPayloadBytes: 1_000_000 })).toBe(16_000_000);
    expect(resolve({}, Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('keeps one batch in flight by default when a batch can take the whole prefetch window, else two', () => {
    const inFlight = (options: { prefetch?: number; maxBatchSize?: number; maxBatchesInFlight?: number }) =>
      resolveConsumerOptions({ connection: 'amqp://x', queue: 'q', consumer: 'c', ...options }, 1024)
        .maxBatchesInFlight;

    expect(inFlight({})).toBe(1);
    expect(inFlight({ prefetch: 100 })).toBe(1);
    expect(inFlight({ prefetch: 100, maxBatchSize: 200 })).toBe(1);
    expect(inFlight({ prefetch: 100, maxBatchSize: 20 })).toBe(2);
    expect(inFlight({ prefetch: 100, maxBatchesInFlight: 3 })).toBe(3);
  });

  it('refuses a content type no delivery could match (parameters, spaces), instead of dead-lettering every delivery', () => {
    const resolve = (contentTypes: string[]) =>
      resolveConsumerOptions({ connection: 'amqp://x', queue: 'q', consumer: 'c', contentTypes }, 1024).decode
        .contentTypes;
    // A delivery's content type is compared without its parameters, trimmed: these matched none.
    for (const contentType of [
      'application/json; charset=utf-8',
      ' application/json',
      'application/json ;',
    ]) {
      expect(() => resolve(['text/plain', contentType])).toThrow(
        expect.objectContaining({
          code: 'FERRY_CONFIG_INVALID',
          option: 'contentTypes',
          message: expect.stringContaining(JSON.stringify(contentType)),
        }),
      );
    }
    expect(resolve(['Application/JSON', 'application/cloudevents+json'])).toEqual([
      'application/json',
      'application/cloudevents+json',
    ]);
  });

  it('refuses, before connecting, a publisher option every publish would fail on (an appId or exchange amqplib cannot encode)', () => {
    const long = 'é'.repeat(128); // 256 UTF-8 bytes: over an AMQP short string
    const attempts: [string, string, () => unknown][] = [
      ['appId', '42 (number)', () => new RabbitPublisher('amqp://x', { appId: 42 as unknown as string })],
      ['appId', '256 bytes', () => new RabbitPublisher('amqp://x', { appId: long })],
      [
        'defaultDestination',
        '256 bytes',
        () => new RabbitPublisher('amqp://x', { defaultDestination: `${long}/key` }),
      ],
      [
        'routes.order.placed.exchange',
        '256 bytes',
        () => new RabbitPublisher('amqp://x', { routes: { 'order.placed': { exchange: long } } }),
      ],
      [
        'routes.order.placed.routingKey',
        '256 bytes',
        () =>
          new RabbitPublisher('amqp://x', {
            routes: { 'order.placed': { exchange: 'orders', routingKey: long } },
          }),
      ],
    ];
    for (const [option, shown, attempt] of attempts) expectConfigError(attempt, option, shown);
    // The routing key of a defaultDestination without one is the event's type, checked per event.
    expect(
      () => new RabbitPublisher('amqp://x', { appId: 'é'.repeat(127), defaultDestination: 'orders' }),
    ).not.toThrow();
  });

  it('refuses, before connecting, a binding the broker cannot declare or that binds nothing the user meant', () => {
    const attach = (bindings: unknown) => () =>
      resolveConsumerOptions(
        { connection: 'amqp://x', queue: 'q', consumer: 'c', bindings: bindings as never },
        1024,
      );
    const attempts: [string, unknown, string][] = [
      // RabbitMQ answers an unknown type with a connection error (503): every attach closed the
      // whole connection, a publisher sharing it too, and ready() named only "Channel ended".
      [
        'bindings[0].exchangeType',
        [{ exchange: 'orders', routingKey: 'k', exchangeType: 'topics' }],
        '"topics"',
      ],
      // A misspelt key bound the queue with routing key '' on a topic exchange: nothing arrived.
      ['bindings[0].routingkey', [{ exchange: 'orders', routingkey: 'order.*' }], 'not a known option'],
      ['bindings[1].routingKey', [{ exchange: 'a', routingKey: 'k' }, { exchange: 'orders' }], 'undefined'],
      ['bindings[0].routingKey', [{ exchange: 'orders', routingKey: 7 }], '7 (number)'],
      ['bindings[0].exchange', [{ exchange: '', routingKey: 'k' }], 'default exchange'],
      ['bindings[0]', [null], 'null'],
      ['bindings', { exchange: 'orders', routingKey: 'k' }, 'array'],
    ];
    for (const [option, bindings, shown] of attempts) expectConfigError(attach(bindings), option, shown);
    expect(attach([{ exchange: 'fan', routingKey: '', exchangeType: 'fanout' }])).not.toThrow();
  });

  // Review 87 (failed first): a binding's exchange or routing key over 255 bytes (an AMQP short
  // string) was taken, and ready() never resolved: every attach failed encoding it, retried for ever.
  it('refuses, before connecting, a binding whose exchange or routing key RabbitMQ cannot take (over 255 bytes)', () => {
    const attach = (bindings: unknown) => () =>
      resolveConsumerOptions(
        { connection: 'amqp://x', queue: 'q', consumer: 'c', bindings: bindings as never },
        1024,
      );
    expectConfigError(
      attach([{ exchange: 'é'.repeat(128), routingKey: 'k' }]),
      'bindings[0].exchange',
      '256 bytes',
    );
    expectConfigError(
      attach([
        { exchange: 'a', routingKey: 'k' },
        { exchange: 'orders', routingKey: 'k'.repeat(256) },
      ]),
      'bindings[1].routingKey',
      '256 bytes',
    );
    expect(attach([{ exchange: 'é'.repeat(127) + 'x', routingKey: 'é'.repeat(127) + 'x' }])).not.toThrow();
  });

  it('refuses, before connecting, a queue whose own or derived names RabbitMQ cannot take (over 255 bytes)', () => {
    const resolve = (options: Record<string, unknown>) => () =>
      resolveConsumerOptions({ connection: 'amqp://x', consumer: 'c', queue: 'q', ...options }, 1024);
    const attempts: [string, Record<string, unknown>, string][] = [
      // Its retry tier `<queue>.retry.1000ms` is 263 bytes: every attach failed, retried for ever.
      ['queue', { queue: 'q'.repeat(250) }, '263 bytes'],
      ['queue', { queue: 'q'.repeat(256) }, '256 bytes'],
      ['deadLetter.exchange', { deadLetter: { exchange: 'x'.repeat(300) } }, '300 bytes'],
      ['retryQueue', { retryQueue: 'r'.repeat(250) }, '257 bytes'],
      ['retryQueue', { retryQueue: 42 }, '42 (number)'],
    ];
    for (const [option, options, shown] of attempts) expectConfigError(resolve(options), option, shown);
    expect(resolve({ queue: 'q'.repeat(241) })).not.toThrow();
  });

  it('closes a connection that never connected, twice, without error', async () => {
    const connection = new RabbitConnection({ url: 'amqp://127.0.0.1:1' });
    await connection.close();
    await connection.close();
    await expect(connection.connect()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });
});
