import { describe, expect, it } from '@jest/globals';
import { FerryConfigError } from '@ferry/core';
import {
  backoffDelay,
  resolveConsumerOptions,
  resolvePublisherOptions,
  visibilityBackoffSeconds,
} from '@ferry/sqs';

const policy = { initialMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: 'none' } as const;

describe('visibility backoff', () => {
  it('doubles per receive and stops at maxMs', () => {
    expect([1, 2, 3, 7, 8].map((n) => backoffDelay(n, policy))).toEqual([
      1_000, 2_000, 4_000, 60_000, 60_000,
    ]);
  });

  it('draws full jitter from the injected random source', () => {
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 0.5)).toBe(2_000);
    expect(backoffDelay(3, { ...policy, jitter: 'full' }, () => 0)).toBe(0);
  });

  it('rounds a visibility up to whole seconds, never to 0, and caps it at 12 hours', () => {
    expect(visibilityBackoffSeconds(1, { ...policy, initialMs: 1_200 })).toBe(2);
    expect(visibilityBackoffSeconds(1, { ...policy, jitter: 'full' }, () => 0)).toBe(1);
    expect(visibilityBackoffSeconds(40, { ...policy, maxMs: 100_000_000 })).toBe(43_200);
  });
});

describe('option resolution', () => {
  it('fills consumer defaults: 10 messages, 20 s long poll, 30 s visibility renewed every 10 s', () => {
    const options = resolveConsumerOptions({ queueUrl: 'orders', consumer: 'billing' });
    expect(options).toMatchObject({
      maxBatchSize: 10,
      waitTimeSeconds: 20,
      visibilityTimeoutSeconds: 30,
      extendEveryMs: 10_000,
      deadLetter: { mode: 'redrive' },
    });
  });

  it('names the bad option in a FERRY_CONFIG_INVALID error', () => {
    expect(() => resolveConsumerOptions({ queueUrl: 'q', consumer: 'c', maxBatchSize: 11 })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'maxBatchSize' }),
    );
    expect(() => resolveConsumerOptions({ queueUrl: 'q', consumer: 'c', waitTimeSeconds: 21 })).toThrow(
      FerryConfigError,
    );
    // Review finding (failed first): a fixed tenant acceptance refuses (too long, a NUL) attached,
    // and every message of the queue was then dead-lettered as invalid.
    for (const fixed of ['x'.repeat(256), 'acme\u0000']) {
      expect(() => resolveConsumerOptions({ queueUrl: 'q', consumer: 'c', tenant: { fixed } })).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'tenant.fixed' }),
      );
    }
    expect(() => resolvePublisherOptions({ maxBatchBytes: 2_000_000 })).toThrow(
      expect.objectContaining({ option: 'maxBatchBytes' }),
    );
  });
});
