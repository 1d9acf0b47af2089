/**
 * `waitTimeSeconds: 0` (short polling) is refused when the consumer is attached: on an empty queue
 * every ReceiveMessage would answer at once and the next follow with no pause, a tight loop of
 * billed requests burning CPU. The refusal says why; 1 to 20 are taken.
 */
import { describe, expect, it } from '@jest/globals';
import { isFerryError } from '@ferry/core';
import { SqsConnection, attachSqsConsumer, resolveConsumerOptions } from '@ferry/sqs';

const base = { queueUrl: 'http://127.0.0.1:1/000000000000/q', consumer: 'c' };

describe('the consumer long-poll wait', () => {
  it('refuses 0, saying it would poll in a tight loop', () => {
    let error: unknown;
    try {
      resolveConsumerOptions({ ...base, waitTimeSeconds: 0 });
    } catch (thrown) {
      error = thrown;
    }
    expect(isFerryError(error, 'FERRY_CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(/waitTimeSeconds.*tight loop/);
  });

  it('attachSqsConsumer refuses 0 before any request', async () => {
    const connection = new SqsConnection({ endpoint: 'http://127.0.0.1:1', region: 'us-east-1' });
    const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };
    expect(() => attachSqsConsumer(acceptor, { ...base, connection, waitTimeSeconds: 0 })).toThrow(
      /tight loop/,
    );
    await connection.close();
  });

  it.each([1, 20])('takes %i', (waitTimeSeconds) => {
    expect(resolveConsumerOptions({ ...base, waitTimeSeconds }).waitTimeSeconds).toBe(waitTimeSeconds);
  });
});
