/**
 * Which host is the connection's endpoint (README, "Queue hosts"): a request for a queue URL on
 * any other host that fails without an answer is the destination's fault (`retryable`), not an SQS
 * outage (`unavailable`). Every request here is refused (FakeNetwork: AWS's hosts are not
 * reachable from a test), and `hosts` shows where the SDK sent it.
 */
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { FakeNetwork } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

const ENV_KEYS = ['AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL', 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'] as const;
const saved = new Map<string, string | undefined>();
beforeEach(() => {
  for (const key of ENV_KEYS) {
    saved.set(key, process.env[key]);
    delete process.env[key];
  }
  // The SDK warns on the console for each request it sends to a queue URL's own host.
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(() => {
  for (const key of ENV_KEYS) {
    const value = saved.get(key);
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  jest.restoreAllMocks();
});

/** Publishes one event to `destination` over `network`; its outcome and where the request went. */
async function publishOne(
  network: FakeNetwork,
  destination: string,
  config: Omit<SQSClientConfig, 'requestHandler' | 'credentials' | 'maxAttempts'> = {},
): Promise<{ status: string; error: string; hosts: string[] }> {
  const connection = new SqsConnection({ client: network.client(config) });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [outcome] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    return {
      status: outcome!.status,
      error: outcome!.status === 'sent' ? '' : outcome!.error,
      hosts: network.hosts,
    };
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
}

const ACCOUNT = '123456789012';

test("without a configured endpoint, a queue URL of another region's SQS is another host: retryable", async () => {
  const network = new FakeNetwork();
  const outcome = await publishOne(network, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`);
  expect(outcome.hosts).toEqual(['sqs.eu-west-1.amazonaws.com:443']);
  // Now: `unavailable`, the relay's circuit opened by one queue URL of another region.
  expect(outcome.status).toBe('retryable');
  expect(outcome.error).toContain("sqs.eu-west-1.amazonaws.com:443 is not the connection's endpoint");
});

test("with an endpoint configured in the environment, the region's own AWS SQS host is another host: retryable", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  const network = new FakeNetwork();
  const outcome = await publishOne(network, `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/orders`);
  expect(outcome.hosts).toEqual(['sqs.us-east-1.amazonaws.com:443']);
  expect(outcome.status).toBe('retryable');
  expect(outcome.error).toContain("not the connection's endpoint");
});

test('a loopback alias of a loopback endpoint on another effective port is another host: retryable', async () => {
  process.env.AWS_ENDPOINT_URL = 'http://localhost:4566';
  const network = new FakeNetwork();
  // https://127.0.0.1 is port 443, not the endpoint's 4566.
  const outcome = await publishOne(network, 'https://127.0.0.1/000000000000/orders');
  expect(outcome.hosts).toEqual(['127.0.0.1:443']);
  expect(outcome.status).toBe('retryable');
});
