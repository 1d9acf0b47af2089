/**
 * The consumer's ready() (and its `connected` event) means SQS answered for the queue: a
 * GetQueueAttributes of it before the first poll. A queue that does not exist rejects ready() at
 * once with FERRY_PERMANENT_FAILURE saying so (the consumer keeps trying: the queue may be created
 * later); an endpoint that does not answer rejects it with FERRY_TIMEOUT naming the endpoint
 * unreachable. Real ElasticMQ; the unreachable endpoint is a port with no service.
 */
import { describe, expect, it } from '@jest/globals';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, attachSqsConsumer, type AttachConsumerOptions, type SqsConsumer } from '@ferry/sqs';
import { SQS_ENDPOINT, uniqueName } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

const acceptor = { maxPayloadBytes: 1024, acceptMany: async () => [] };

describe('SQS consumer readiness', () => {
  const fixture = useSqsQueuesFixture();

  function attach(options: Partial<AttachConsumerOptions> & { queueUrl: string }): {
    consumer: SqsConsumer;
    events: TransportConsumerEvent[];
  } {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: fixture.connection,
      consumer: 'c',
      waitTimeSeconds: 1,
      reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
      observer: (event) => events.push(event),
      ...options,
    });
    fixture.consumers.push(consumer);
    return { consumer, events };
  }

  const missingUrl = () => `${SQS_ENDPOINT}/000000000000/${uniqueName('missing')}`;

  it.each([
    ['by URL, dead-letter queue mode', () => missingUrl(), 'queue' as const],
    ['by URL, redrive mode', () => missingUrl(), 'redrive' as const],
    ['by name', () => uniqueName('missing'), 'queue' as const],
  ])('a queue that does not exist (%s): ready() rejects at once saying so', async (_, queue, mode) => {
    const { queueUrl: deadLetterUrl } = await fixture.queues.declareBare({ name: uniqueName('ready-dlq') });
    const queueUrl = queue();
    const { consumer, events } = attach({
      queueUrl,
      deadLetter: mode === 'queue' ? { mode, queueUrl: deadLetterUrl } : { mode },
    });
    await expect(consumer.ready({ timeoutMs: 600_000 })).rejects.toMatchObject({
      code: 'FERRY_PERMANENT_FAILURE',
      message: expect.stringMatching(/does not exist/),
    });
    expect(events.filter((e) => e.type === 'connected')).toEqual([]);
  });

  it('a dead-letter queue that does not exist (queue mode): ready() rejects at once naming it', async () => {
    const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('ready-src') });
    const deadLetterUrl = missingUrl();
    const { consumer } = attach({ queueUrl, deadLetter: { mode: 'queue', queueUrl: deadLetterUrl } });
    const refusal = await consumer.ready({ timeoutMs: 600_000 }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({
      code: 'FERRY_PERMANENT_FAILURE',
      message: expect.stringContaining(`dead-letter queue ${deadLetterUrl}`),
    });
    expect((refusal as Error).message).toMatch(/the queue does not exist/);
  });

  it('an endpoint that does not answer: ready() rejects with FERRY_TIMEOUT naming it unreachable, never resolves', async () => {
    const down = new SqsConnection({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    try {
      const { consumer, events } = attach({
        connection: down,
        queueUrl: 'http://127.0.0.1:1/000000000000/q',
        deadLetter: { mode: 'queue', queueUrl: 'http://127.0.0.1:1/000000000000/q-dlq' },
      });
      await expect(consumer.ready({ timeoutMs: 1_000 })).rejects.toMatchObject({
        code: 'FERRY_TIMEOUT',
        message: expect.stringMatching(
          /the last attempt failed: .*SQS did not answer .*\(endpoint unreachable\)/,
        ),
      });
      expect(events.filter((e) => e.type === 'connected')).toEqual([]);
      await consumer.close();
    } finally {
      await down.close();
    }
  });

  it('an existing queue in dead-letter queue mode: ready() resolves once SQS answered for it, then connected', async () => {
    const { queueUrl } = await fixture.queues.declareBare({ name: uniqueName('ready-ok') });
    const { queueUrl: deadLetterUrl } = await fixture.queues.declareBare({
      name: uniqueName('ready-ok-dlq'),
    });
    const { consumer, events } = attach({ queueUrl, deadLetter: { mode: 'queue', queueUrl: deadLetterUrl } });
    await consumer.ready();
    expect(events.filter((e) => e.type === 'connected')).toHaveLength(1);
  });
});
