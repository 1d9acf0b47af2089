/**
 * The SQS timeouts go into timers (core's deadlineSignal): one over 2^31-1 ms, which Node would
 * clamp to 1 ms (every request abandoned at once), is refused with FERRY_CONFIG_INVALID.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_TIMER_MS } from '@ferry/core/transport';
import {
  SqsConnection,
  resolveConnectionOptions,
  resolveConsumerOptions,
  resolvePublisherOptions,
} from '@ferry/sqs';
import { SQS_ENDPOINT } from './support/sqs';

const credentials = { accessKeyId: 'ferry', secretAccessKey: 'ferry' };

describe('SQS timeouts over the timer limit', () => {
  it.each([
    ['setupTimeoutMs', () => resolveConnectionOptions({ setupTimeoutMs: MAX_TIMER_MS + 1 })],
    ['confirmTimeoutMs', () => resolvePublisherOptions({ confirmTimeoutMs: MAX_TIMER_MS + 1 })],
    [
      'closeTimeoutMs',
      () => resolveConsumerOptions({ queueUrl: 'q', consumer: 'c', closeTimeoutMs: MAX_TIMER_MS + 1 }),
    ],
  ])('%s of 2^31 is refused (FERRY_CONFIG_INVALID)', (name, resolve) => {
    expect(resolve).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', message: expect.stringContaining(name) }),
    );
  });

  it('setupTimeoutMs of 2^31-1 is honoured: connect() succeeds against ElasticMQ', async () => {
    const connection = new SqsConnection({
      endpoint: SQS_ENDPOINT,
      region: 'us-east-1',
      setupTimeoutMs: MAX_TIMER_MS,
      credentials,
    });
    try {
      await expect(connection.connect()).resolves.toBeUndefined();
    } finally {
      await connection.close();
    }
  });

  it('confirmTimeoutMs of 2^31-1 is taken', () => {
    expect(resolvePublisherOptions({ confirmTimeoutMs: MAX_TIMER_MS }).confirmTimeoutMs).toBe(MAX_TIMER_MS);
  });

  it('consumer closeTimeoutMs below 1 is refused; 10 s by default', () => {
    const resolve = (closeTimeoutMs?: number) =>
      resolveConsumerOptions({ queueUrl: 'q', consumer: 'c', closeTimeoutMs });
    expect(() => resolve(0)).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID' }));
    expect(resolve().closeTimeoutMs).toBe(10_000);
  });
});
