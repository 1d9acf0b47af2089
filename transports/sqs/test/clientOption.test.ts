/**
 * A caller-supplied SQSClient holds its own endpoint, region, credentials and maxAttempts: the
 * dead-letter region check reads the client's region (an async provider in its config), and the
 * connection options the client would ignore are refused, never dropped in silence.
 */
import { describe, expect, it } from '@jest/globals';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsConnection, attachSqsConsumer, resolveConnectionOptions } from '@ferry/sqs';

const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

function unreachableClient(region: string): SQSClient {
  return new SQSClient({ region, endpoint: 'http://127.0.0.1:1', maxAttempts: 1, credentials });
}

/** What ready() rejects with for a consumer in queue mode with both queues in `region`. */
async function readyFailure(connection: SqsConnection, region: string): Promise<unknown> {
  const consumer = attachSqsConsumer(acceptor, {
    connection,
    consumer: 'c',
    queueUrl: `https://sqs.${region}.amazonaws.com/000000000000/src`,
    deadLetter: { mode: 'queue', queueUrl: `https://sqs.${region}.amazonaws.com/000000000000/dead` },
    reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
  });
  try {
    return await consumer.ready({ timeoutMs: 1_000 }).catch((e: unknown) => e);
  } finally {
    await consumer.close();
  }
}

describe('SqsConnection given a client', () => {
  it("checks a dead-letter queue's region against the client's region, not the default", async () => {
    const client = unreachableClient('eu-west-1');
    const connection = new SqsConnection({ client, setupTimeoutMs: 2_000 });
    try {
      // The endpoint is unreachable: ready() times out, never a configuration error.
      expect(await readyFailure(connection, 'eu-west-1')).toMatchObject({ code: 'FERRY_TIMEOUT' });
      const other = await readyFailure(connection, 'ap-south-1');
      expect(other).toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        message: expect.stringMatching(/region ap-south-1 and the connection signs for eu-west-1/),
      });
    } finally {
      await connection.close();
      client.destroy();
    }
  });

  it.each([
    ['endpoint', { endpoint: 'http://127.0.0.1:9324' }],
    ['region', { region: 'eu-west-1' }],
    ['credentials', { credentials }],
    ['maxAttempts', { maxAttempts: 2 }],
  ] as const)('refuses %s beside client (FERRY_CONFIG_INVALID), naming it', (key, extra) => {
    const client = unreachableClient('eu-west-1');
    try {
      expect(() => resolveConnectionOptions({ client, ...extra })).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', message: expect.stringContaining(key) }),
      );
    } finally {
      client.destroy();
    }
  });

  it('takes setupTimeoutMs beside client', () => {
    const client = unreachableClient('eu-west-1');
    try {
      expect(resolveConnectionOptions({ client, setupTimeoutMs: 5 }).setupTimeoutMs).toBe(5);
    } finally {
      client.destroy();
    }
  });
});
