/**
 * A credential provider that never answers (its promise never settles) holds no call of the
 * transport past its deadline: the SDK waits for credentials with no deadline of its own and does
 * not look at a request's abort signal while it waits, so each call races the wait against the
 * deadline it already has and names the credentials as the cause. Real ElasticMQ queues; only the
 * credentials hang.
 */
import { describe, expect, it } from '@jest/globals';
import { isFerryError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, attachSqsConsumer, type StaticCredentials } from '@ferry/sqs';
import {
  SQS_ENDPOINT,
  neverAborted,
  outboxMessages,
  receiveAtLeast,
  uniqueName,
  waitFor,
} from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

const identity: StaticCredentials = { accessKeyId: 'ferry', secretAccessKey: 'ferry' };
const never = (): Promise<StaticCredentials> => new Promise<StaticCredentials>(() => undefined);

function hungConnection(extra: { setupTimeoutMs?: number } = {}, credentials = never): SqsConnection {
  return new SqsConnection({
    endpoint: SQS_ENDPOINT,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
    ...extra,
  });
}

describe('SQS transport with a credential provider that never answers', () => {
  const fixture = useSqsQueuesFixture();
  const { consumers, opened } = fixture;

  const open = (...args: Parameters<typeof hungConnection>) => {
    const made = hungConnection(...args);
    opened.push(made);
    return made;
  };

  it.each([
    ['a queue URL', (url: string) => url],
    ['a queue name (looked up first)', (url: string) => url.slice(url.lastIndexOf('/') + 1)],
  ])(
    'publish() to %s answers unavailable within confirmTimeoutMs, naming the credentials',
    async (_, queueOf) => {
      const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('cred-pub') });
      const publisher = new SqsPublisher(open(), { confirmTimeoutMs: 300 });
      const messages = outboxMessages(2, queueOf(queueUrl));
      const outcomes = await publisher.publish(messages, neverAborted());
      expect(outcomes).toEqual(
        messages.map((m) => ({
          id: m.id,
          status: 'unavailable',
          error: expect.stringMatching(/credentials provider did not answer/),
        })),
      );
    },
  );

  it('connect() rejects within setupTimeoutMs with FERRY_TRANSPORT_ERROR naming the credentials', async () => {
    const error = await open({ setupTimeoutMs: 300 })
      .connect()
      .then(
        () => null,
        (thrown: unknown) => thrown,
      );
    expect(isFerryError(error, 'FERRY_TRANSPORT_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(/credentials provider did not answer.*300 ms/);
    expect((error as Error).message).not.toMatch(/endpoint did not answer/);
  });

  it('a provider that hung once is asked again by the next call, which then goes through', async () => {
    let calls = 0;
    const flaky = (): Promise<StaticCredentials> => (++calls === 1 ? never() : Promise.resolve(identity));
    const made = hungConnection({ setupTimeoutMs: 300 }, flaky);
    opened.push(made);
    await expect(made.connect()).rejects.toThrow(/credentials provider did not answer/);
    await made.connect();
    expect(calls).toBe(2);
  });

  it('the consumer: close() returns, and ready() names the credentials as the last failure', async () => {
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('cred-con') });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(
      { maxPayloadBytes: 1024, acceptMany: async () => [] },
      {
        connection: open({ setupTimeoutMs: 300 }),
        queueUrl,
        consumer: 'c',
        waitTimeSeconds: 1,
        visibilityTimeoutSeconds: 1,
        extendEveryMs: 300,
        reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
        observer: (event) => events.push(event),
      },
    );
    consumers.push(consumer);
    await expect(consumer.ready({ timeoutMs: 2_000 })).rejects.toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringMatching(/the last attempt failed: .*credentials provider did not answer/),
    });
    expect(events.filter((e) => e.type === 'connected')).toEqual([]);
    await consumer.close();
  });

  it('the consumer: close() returns while its first request waits for credentials (no setupTimeoutMs given)', async () => {
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('cred-close') });
    const consumer = attachSqsConsumer(
      { maxPayloadBytes: 1024, acceptMany: async () => [] },
      { connection: open(), queueUrl, consumer: 'c' },
    );
    await consumer.close();
    await expect(consumer.ready()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });

  it('the consumer: a provider that stops answering mid-batch holds neither the deletes nor close() past their deadline; the batch comes back', async () => {
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('cred-mid') });
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(fixture.connection).publish(messages, neverAborted());
    // Credentials that expire within the SDK's refresh window: it asks the provider before every request.
    let hang = false;
    const expiring = (): Promise<StaticCredentials> =>
      hang ? never() : Promise.resolve({ ...identity, expiration: new Date(Date.now() + 60_000) });
    const events: TransportConsumerEvent[] = [];
    const accepted: string[] = [];
    const consumer = attachSqsConsumer(
      {
        maxPayloadBytes: 1024 * 1024,
        acceptMany: async (batch) => {
          accepted.push(...batch.map((input) => input.messageId));
          hang = true; // the deletes that follow wait for credentials that never come
          return batch.map((input) => ({ kind: 'accepted' as const, id: input.messageId }));
        },
      },
      {
        connection: open({}, expiring),
        queueUrl,
        consumer: 'c',
        waitTimeSeconds: 1,
        visibilityTimeoutSeconds: 2,
        extendEveryMs: 500,
        observer: (event) => events.push(event),
      },
    );
    await waitFor('a delete given up for the credentials', () =>
      events.find((e) => e.type === 'error' && /credentials provider did not answer/.test(e.error)),
    );
    await consumer.close();
    expect(events.filter((e) => e.type === 'settled')).toEqual([]);
    // Not deleted: the batch is visible again after its visibility timeout.
    expect((await receiveAtLeast(fixture.connection, queueUrl, messages.length)).length).toBe(
      messages.length,
    );
    expect([...new Set(accepted)].sort()).toEqual(messages.map((m) => m.id).sort());
  });
});
