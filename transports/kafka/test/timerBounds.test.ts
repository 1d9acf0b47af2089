/**
 * The Kafka timeouts go into timers (ferry's deadlines, the client's request timers): one over
 * 2^31-1 ms, which Node would clamp to 1 ms, is refused with FERRY_CONFIG_INVALID.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_TIMER_MS } from '@ferry/core/transport';
import { resolveConnectionOptions, resolveConsumerOptions, resolvePublisherOptions } from '@ferry/kafka';
import { silentLogger, testConnection } from './support';

const OVER = MAX_TIMER_MS + 1;

describe('Kafka timeouts over the timer limit', () => {
  const connection = testConnection(); // not connected: options only
  const consumer = (extra: object) => () =>
    resolveConsumerOptions({ connection, topic: 't', groupId: 'g', consumer: 'c', ...extra });

  it.each([
    [
      'connectionTimeoutMs',
      () => resolveConnectionOptions({ brokers: ['h:1'], logger: silentLogger, connectionTimeoutMs: OVER }),
    ],
    [
      'requestTimeoutMs',
      () => resolveConnectionOptions({ brokers: ['h:1'], logger: silentLogger, requestTimeoutMs: OVER }),
    ],
    ['confirmTimeoutMs', () => resolvePublisherOptions({ confirmTimeoutMs: OVER })],
    ['sessionTimeoutMs', consumer({ sessionTimeoutMs: OVER })],
    ['rebalanceTimeoutMs', consumer({ rebalanceTimeoutMs: OVER })],
    ['maxWaitTimeMs', consumer({ maxWaitTimeMs: OVER })],
  ])('%s of 2^31 is refused (FERRY_CONFIG_INVALID)', (name, resolve) => {
    expect(resolve).toThrow(
      expect.objectContaining({
        code: 'FERRY_CONFIG_INVALID',
        message: expect.stringContaining(`${name}: must be an integer between`),
      }),
    );
  });

  it('2^31-1 is taken', () => {
    expect(resolvePublisherOptions({ confirmTimeoutMs: MAX_TIMER_MS }).confirmTimeoutMs).toBe(MAX_TIMER_MS);
    expect(consumer({ rebalanceTimeoutMs: MAX_TIMER_MS })().rebalanceTimeoutMs).toBe(MAX_TIMER_MS);
  });
});
