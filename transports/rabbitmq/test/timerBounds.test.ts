/**
 * The RabbitMQ confirm timeouts go into timers: one over 2^31-1 ms, which Node would clamp to
 * 1 ms (every publish unconfirmed at once), is refused with FERRY_CONFIG_INVALID.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_TIMER_MS } from '@ferry/core/transport';
import { resolveConsumerOptions, resolvePublisherOptions } from '@ferry/rabbitmq';

const OVER = MAX_TIMER_MS + 1;

describe('RabbitMQ timeouts over the timer limit', () => {
  it.each([
    ['publisher confirmTimeoutMs', () => resolvePublisherOptions({ confirmTimeoutMs: OVER })],
    [
      'consumer confirmTimeoutMs',
      () =>
        resolveConsumerOptions(
          { connection: 'amqp://x', queue: 'q', consumer: 'c', confirmTimeoutMs: OVER },
          1024,
        ),
    ],
    [
      'consumer closeTimeoutMs',
      () =>
        resolveConsumerOptions(
          { connection: 'amqp://x', queue: 'q', consumer: 'c', closeTimeoutMs: OVER },
          1024,
        ),
    ],
  ])('%s of 2^31 is refused (FERRY_CONFIG_INVALID)', (name, resolve) => {
    expect(resolve).toThrow(
      expect.objectContaining({
        code: 'FERRY_CONFIG_INVALID',
        message: expect.stringContaining(name.split(' ')[1]!),
      }),
    );
  });

  it('consumer closeTimeoutMs below 1 is refused; 10 s by default', () => {
    const resolve = (closeTimeoutMs?: number) =>
      resolveConsumerOptions({ connection: 'amqp://x', queue: 'q', consumer: 'c', closeTimeoutMs }, 1024);
    expect(() => resolve(0)).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID' }));
    expect(resolve().closeTimeoutMs).toBe(10_000);
  });

  it('2^31-1 is taken', () => {
    expect(resolvePublisherOptions({ confirmTimeoutMs: MAX_TIMER_MS }).confirmTimeoutMs).toBe(MAX_TIMER_MS);
  });
});
