/**
 * Review 58: the endpoint configured outside the code is a VPC endpoint of the region
 * (`AWS_ENDPOINT_URL_SQS=https://vpce-….sqs.us-east-1.vpce.amazonaws.com`) and the destinations are
 * the queues' public URLs (`https://sqs.us-east-1.amazonaws.com/…`, as the console shows them), so
 * the SDK sends each SendMessageBatch to the regional host. README ("Queue hosts") says a VPC
 * endpoint answers GetQueueUrl with URLs on that regional host, and takes such a host as the
 * endpoint's, but only once this process happened to resolve a queue name. A user sees the same
 * destination, in the same regional outage, charged and FAILED by a relay process that started
 * during the outage (or only ever publishes to URLs), and held unharmed by one that had looked up
 * a name earlier: whether events survive an SQS outage depends on the process's history.
 */
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { FakeNetwork, withoutConfiguredEndpoints } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

withoutConfiguredEndpoints();

const PUBLIC_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/orders';

async function publishOne(connection: SqsConnection, destination: string): Promise<string> {
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [outcome] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    return outcome!.status;
  } finally {
    await publisher.close();
  }
}

test("a VPC endpoint's regional queue URL during the region's outage: the same outcome whatever the process resolved before", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'https://vpce-0abc-xyz.sqs.us-east-1.vpce.amazonaws.com';
  // The regional outage: SendMessageBatch refused everywhere; GetQueueUrl had answered (earlier).
  const config: Omit<SQSClientConfig, 'requestHandler' | 'maxAttempts'> = {};
  const answered = new FakeNetwork({
    GetQueueUrl: { QueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/audit' },
  });
  const warm = new SqsConnection({ client: answered.client(config) });
  const fresh = new SqsConnection({ client: new FakeNetwork().client(config) });
  try {
    // A process that resolved a queue name before the outage.
    await warm.queueUrl('audit');
    const warmStatus = await publishOne(warm, PUBLIC_URL);
    // A process (re)started during the outage, or one whose destinations are all URLs.
    const freshStatus = await publishOne(fresh, PUBLIC_URL);
    expect(warmStatus).toBe('unavailable');
    // Observed: retryable (charged: FAILED at maxRetries) for the same URL in the same outage.
    expect(freshStatus).toBe(warmStatus);
  } finally {
    await warm.close();
    await fresh.close();
  }
});
