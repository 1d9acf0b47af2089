/**
 * A consumer in dead-letter queue mode checks at attach that its dead-letter queue is of the
 * connection's region, reading the region from the client: an application's own SQSClient whose
 * `region` is a provider (an instance-metadata or config-service lookup). When that lookup hangs
 * once (a metadata call lost at startup), the attach waited for it for ever: the consumer never
 * became ready and received nothing, though the provider answers on its next call (review 58's
 * note on deadLetterCheck.ts). The check is bounded by the attach's deadline and tried again.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsConnection, attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { SQS_ENDPOINT, uniqueName } from './support/sqs';

jest.setTimeout(60_000);

const f = useSqsConsumerFixture();

test('a region provider that hangs once delays a dead-letter-queue consumer, never holds it for ever', async () => {
  const source = await f.queues.declareBare({ name: uniqueName('dlq-region-src') });
  const dead = await f.queues.declareBare({ name: uniqueName('dlq-region-dead') });
  let regionCalls = 0;
  const client = new SQSClient({
    endpoint: SQS_ENDPOINT,
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    region: () => {
      regionCalls += 1;
      return regionCalls === 1 ? new Promise<string>(() => undefined) : Promise.resolve('elasticmq');
    },
  });
  const connection = new SqsConnection({ client, setupTimeoutMs: 2_000 });
  try {
    const consumer = attachSqsConsumer(await f.freshAcceptor(), {
      connection,
      queueUrl: source.queueUrl,
      consumer: 'dlq-region',
      waitTimeSeconds: 1,
      reconnectBackoff: { initialMs: 50, maxMs: 50, jitter: 'none' },
      deadLetter: { mode: 'queue', queueUrl: dead.queueUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      consumer.ready().then(
        () => 'ready',
        (error: unknown) => `rejected: ${String(error)}`,
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('still waiting after 30 s'), 30_000);
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe('ready');
    expect(regionCalls).toBeGreaterThanOrEqual(2);
  } finally {
    await connection.close();
  }
});
