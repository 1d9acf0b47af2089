/**
 * Review finding (failed first): an option bounded by another option's default must say so. An
 * `extendEveryMs` at or above the default visibility timeout was refused as "an integer between 50
 * and 29999", naming no visibility timeout; left out, it follows the visibility timeout.
 * Pure logic: no request is sent.
 */
import { resolveConsumerOptions, SqsConnection } from '@ferry/sqs';

const endpoint = 'http://127.0.0.1:1';
const connection = new SqsConnection({ endpoint, region: 'us-east-1' });
const resolve = (extra: Record<string, number>) =>
  resolveConsumerOptions({
    queueUrl: `${endpoint}/000000000000/q`,
    consumer: 'c',
    ...extra,
    connection,
  } as never);

afterAll(() => connection.close());

describe('extendEveryMs and visibilityTimeoutSeconds', () => {
  test('left out, the renewal follows the visibility timeout', () => {
    expect(resolve({ visibilityTimeoutSeconds: 3 }).extendEveryMs).toBe(1_000);
  });

  test('a renewal too slow for the default visibility timeout names that default', () => {
    expect(() => resolve({ extendEveryMs: 40_000 })).toThrow(
      'invalid option extendEveryMs: must be less than visibilityTimeoutSeconds × 1000 (30000, the default), got 40000',
    );
  });
});
