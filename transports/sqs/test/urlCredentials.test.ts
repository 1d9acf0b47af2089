/**
 * An endpoint or queue URL with a user and password (`http://AKID:secret@host`) is shown without
 * them in every error, outcome and event the transport makes: core's stripUrlCredentials, the one
 * home of the rule.
 */
import { describe, expect, it } from '@jest/globals';
import { isFerryError } from '@ferry/core';
import { SqsConnection, SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import { SQS_ENDPOINT, neverAborted, outboxMessages, uniqueName } from './support/sqs';

const SECRET = 'SeCrEtPaSs';
const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

describe('SQS URLs with credentials in them', () => {
  it('connect() to an endpoint with user:password does not show the password', async () => {
    const connection = new SqsConnection({
      endpoint: `http://AKIDREVIEW:${SECRET}@127.0.0.1:1`,
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: { ...credentials },
    });
    try {
      const error = (await connection.connect().catch((e: unknown) => e)) as Error;
      expect(isFerryError(error, 'FERRY_TRANSPORT_ERROR')).toBe(true);
      expect(error.message).toContain('127.0.0.1:1');
      expect(error.message).not.toContain(SECRET);
    } finally {
      await connection.close();
    }
  });

  it('a publish to a queue URL with user:password: neither the outcome nor the event shows the password', async () => {
    const connection = new SqsConnection({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: { ...credentials },
    });
    const events: unknown[] = [];
    const publisher = new SqsPublisher(connection, {
      defaultDestination: `http://u:${SECRET}@127.0.0.1:1/000000000000/q`,
      observer: (event) => events.push(event),
    });
    try {
      const outcomes = await publisher.publish(outboxMessages(1, null), neverAborted());
      expect(outcomes[0]).toMatchObject({ status: 'unavailable' });
      expect(JSON.stringify(outcomes)).not.toContain(SECRET);
      expect(events.length).toBeGreaterThan(0);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    } finally {
      await publisher.close();
      await connection.close();
    }
  });

  it('the consumer: a refused deadLetter.queueUrl and the events do not show the password', async () => {
    const connection = new SqsConnection({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: { ...credentials },
    });
    const queueUrl = `http://u:${SECRET}@127.0.0.1:1/000000000000/q`;
    try {
      expect(() =>
        attachSqsConsumer(acceptor, {
          connection,
          queueUrl,
          consumer: 'c',
          deadLetter: { mode: 'queue', queueUrl },
        }),
      ).toThrow(
        expect.objectContaining({
          code: 'FERRY_CONFIG_INVALID',
          message: expect.not.stringContaining(SECRET),
        }),
      );
      const events: unknown[] = [];
      const consumer = attachSqsConsumer(acceptor, {
        connection,
        queueUrl,
        consumer: 'c',
        reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
        observer: (event) => events.push(event),
      });
      const error = (await consumer.ready({ timeoutMs: 500 }).catch((e: unknown) => e)) as Error;
      await consumer.close();
      expect(error.message).not.toContain(SECRET);
      expect(events.length).toBeGreaterThan(0);
      expect(JSON.stringify(events)).not.toContain(SECRET);
    } finally {
      await connection.close();
    }
  });

  it('a queue that does not exist (FERRY_PERMANENT_FAILURE): the refusal does not show the password', async () => {
    const connection = new SqsConnection({
      endpoint: SQS_ENDPOINT,
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: { ...credentials },
    });
    const queueUrl = `${SQS_ENDPOINT.replace('://', `://u:${SECRET}@`)}/000000000000/${uniqueName('missing')}`;
    const consumer = attachSqsConsumer(acceptor, { connection, queueUrl, consumer: 'c' });
    try {
      const error = await consumer.ready({ timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'FERRY_PERMANENT_FAILURE',
        message: expect.stringContaining('does not exist'),
      });
      expect((error as Error).message).not.toContain(SECRET);
    } finally {
      await consumer.close();
      await connection.close();
    }
  });
});
