/**
 * A credential provider that fails (throws, or the SDK's default chain finds no credentials) is
 * named as the cause, never reported as an endpoint that did not answer, and costs no publish
 * attempt (`unavailable`). A provider call the SDK shares among requests is waited for by each
 * request until its own deadline: one request ending does not fail the others. Real ElasticMQ
 * queues; only the credentials fail.
 */
import { describe, expect, it } from '@jest/globals';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, attachSqsConsumer, type StaticCredentials } from '@ferry/sqs';
import { SQS_ENDPOINT, neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

const identity: StaticCredentials = { accessKeyId: 'ferry', secretAccessKey: 'ferry' };
const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

/** What a provider throws: its own error, and the SDK's when its default chain finds nothing. */
const THROWN: readonly (readonly [string, () => Error, RegExp])[] = [
  ['a provider that throws', () => new Error('vault sealed'), /vault sealed/],
  [
    "the SDK's CredentialsProviderError",
    () =>
      Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
    /Could not load credentials/,
  ],
];

describe('SQS transport with a credential provider that fails', () => {
  const fixture = useSqsQueuesFixture();

  const open = (credentials: () => Promise<StaticCredentials>): SqsConnection => {
    const made = new SqsConnection({
      endpoint: SQS_ENDPOINT,
      region: 'us-east-1',
      maxAttempts: 1,
      credentials,
    });
    fixture.opened.push(made);
    return made;
  };

  it.each(THROWN)(
    '%s: connect() names the credentials provider, not an endpoint unreachable',
    async (_, thrown, text) => {
      const error = await open(async () => {
        throw thrown();
      })
        .connect()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'FERRY_TRANSPORT_ERROR',
        message: expect.stringMatching(/credentials provider failed/),
      });
      expect((error as Error).message).toMatch(text);
      expect((error as Error).message).not.toMatch(/did not answer|endpoint unreachable/);
    },
  );

  it.each(THROWN)(
    '%s: publish() reports unavailable (no attempt spent), naming the provider',
    async (_, thrown) => {
      const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('cred-fail-pub') });
      const publisher = new SqsPublisher(
        open(async () => {
          throw thrown();
        }),
        { defaultDestination: queueUrl },
      );
      const messages = outboxMessages(2, null);
      const outcomes = await publisher.publish(messages, neverAborted());
      await publisher.close();
      expect(outcomes).toEqual(
        messages.map((m) => ({
          id: m.id,
          status: 'unavailable',
          error: expect.stringMatching(/CredentialsProviderError: (vault sealed|Could not load)/),
        })),
      );
    },
  );

  it("the consumer: ready()'s timeout and the disconnected events name the credentials provider", async () => {
    const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('cred-fail-con') });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: open(async () => {
        throw new Error('vault sealed');
      }),
      queueUrl,
      consumer: 'c',
      reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
      observer: (event) => events.push(event),
    });
    fixture.consumers.push(consumer);
    const error = await consumer.ready({ timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringMatching(/the last attempt failed: .*credentials provider failed.*vault sealed/),
    });
    expect((error as Error).message).not.toMatch(/did not answer|endpoint unreachable/);
    const disconnected = events.filter((e) => e.type === 'disconnected');
    expect(disconnected.length).toBeGreaterThan(0);
    for (const event of disconnected) {
      expect(event).toMatchObject({
        error: expect.stringMatching(/credentials provider failed.*vault sealed/),
      });
    }
  });
});

describe('SQS requests waiting for one shared credential provider call', () => {
  const fixture = useSqsQueuesFixture();

  /** A connection whose provider answers only when the test calls `held.answer`. */
  const heldConnection = () => {
    const held = { calls: 0, answer: (_: StaticCredentials): void => undefined };
    const connection = new SqsConnection({
      endpoint: SQS_ENDPOINT,
      region: 'us-east-1',
      credentials: () => {
        held.calls += 1;
        return new Promise<StaticCredentials>((resolve) => (held.answer = resolve));
      },
    });
    fixture.opened.push(connection);
    return { connection, held };
  };

  it("one request's end (consumer.close()) does not fail another request waiting for the same call", async () => {
    const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('cred-share') });
    const { connection, held } = heldConnection();
    const publisher = new SqsPublisher(connection, {
      defaultDestination: queueUrl,
      confirmTimeoutMs: 30_000,
    });
    const consumer = attachSqsConsumer(acceptor, { connection, queueUrl, consumer: 'c', waitTimeSeconds: 1 });
    fixture.consumers.push(consumer);
    const publishing = publisher.publish(outboxMessages(1, null), neverAborted());
    await waitFor('the provider asked', async () => (held.calls > 0 ? true : undefined));
    // The consumer's request waits for the same call: closing it ends that request only.
    await consumer.close();
    held.answer(identity);
    const [outcome] = await publishing;
    await publisher.close();
    expect(outcome).toEqual({ id: expect.any(String), status: 'sent' });
    expect(held.calls).toBe(1);
  });

  it('a request whose own deadline ends fails naming the provider; one with a later deadline gets the answer', async () => {
    const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('cred-share2') });
    const { connection, held } = heldConnection();
    const patient = new SqsPublisher(connection, { defaultDestination: queueUrl, confirmTimeoutMs: 30_000 });
    const hasty = new SqsPublisher(connection, { defaultDestination: queueUrl, confirmTimeoutMs: 200 });
    const waiting = patient.publish(outboxMessages(1, null), neverAborted());
    const [short] = await hasty.publish(outboxMessages(1, null), neverAborted());
    expect(short).toMatchObject({
      status: 'unavailable',
      error: expect.stringMatching(/credentials provider did not answer/),
    });
    held.answer(identity);
    const [long] = await waiting;
    await Promise.all([patient.close(), hasty.close()]);
    expect(long).toEqual({ id: expect.any(String), status: 'sent' });
    expect(held.calls).toBe(1);
  });
});
