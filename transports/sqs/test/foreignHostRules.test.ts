/**
 * Which host is the connection's endpoint (README, "Queue hosts"): a request for a queue URL on
 * any other host that fails without an answer is the destination's fault (`retryable`), not an SQS
 * outage (`unavailable`). Every request here is refused (FakeNetwork: AWS's hosts are not
 * reachable from a test), and `hosts` shows where the SDK sent it.
 */
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher, declareQueue } from '@ferry/sqs';
import { FakeNetwork, withoutConfiguredEndpoints } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

withoutConfiguredEndpoints();

/** Publishes one event to `destination` over `network`; its outcome and where the request went. */
async function publishOne(
  network: FakeNetwork,
  destination: string,
  config: Omit<SQSClientConfig, 'requestHandler' | 'maxAttempts'> = {},
  connection = new SqsConnection({ client: network.client(config) }),
): Promise<{ status: string; error: string; hosts: string[] }> {
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

// With an endpoint configured outside the code, the region's own AWS SQS hosts stay the endpoint's
// (review 58: a VPC endpoint's queues have the regional URL, and may be that region's outage);
// another region's host is another host.
test("with an endpoint configured in the environment, another region's AWS SQS host is another host: retryable", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  const network = new FakeNetwork();
  const outcome = await publishOne(network, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`);
  expect(outcome.hosts).toEqual(['sqs.eu-west-1.amazonaws.com:443']);
  expect(outcome.status).toBe('retryable');
  expect(outcome.error).toContain("not the connection's endpoint (http://localhost:4566)");
  const own = await publishOne(new FakeNetwork(), `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/orders`);
  expect(own).toMatchObject({ status: 'unavailable', hosts: ['sqs.us-east-1.amazonaws.com:443'] });
});

test('a loopback alias of a loopback endpoint on another effective port is another host: retryable', async () => {
  process.env.AWS_ENDPOINT_URL = 'http://localhost:4566';
  const network = new FakeNetwork();
  // https://127.0.0.1 is port 443, not the endpoint's 4566.
  const outcome = await publishOne(network, 'https://127.0.0.1/000000000000/orders');
  expect(outcome.hosts).toEqual(['127.0.0.1:443']);
  expect(outcome.status).toBe('retryable');
});

// The rule's other side: what is the endpoint's stays an outage (`unavailable`, no attempt spent).

test("without a configured endpoint, the region's AWS SQS hosts are the endpoint's: unavailable", async () => {
  for (const host of [
    'sqs.us-east-1.amazonaws.com',
    'sqs-fips.us-east-1.amazonaws.com',
    'SQS.US-EAST-1.AMAZONAWS.COM',
  ]) {
    const network = new FakeNetwork();
    const outcome = await publishOne(network, `https://${host}/${ACCOUNT}/orders`);
    expect(outcome.hosts).toEqual([`${host.toLowerCase()}:443`]);
    expect(outcome).toMatchObject({ status: 'unavailable' });
  }
});

test('an endpoint given to the client takes every request, whatever host a queue URL names: unavailable', async () => {
  const network = new FakeNetwork();
  const outcome = await publishOne(network, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`, {
    endpoint: 'http://127.0.0.1:4566',
  });
  // The SDK sends it to the endpoint (it never reaches eu-west-1): the endpoint's outage.
  expect(outcome.hosts).toEqual(['127.0.0.1:4566']);
  expect(outcome.status).toBe('unavailable');
});

test('loopback aliases of a loopback endpoint on its effective port are the endpoint: unavailable', async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  for (const url of ['http://127.0.0.1:4566/000000000000/orders', 'http://[::1]:4566/000000000000/orders']) {
    expect(await publishOne(new FakeNetwork(), url)).toMatchObject({ status: 'unavailable' });
  }
  // http://localhost is port 80: http://127.0.0.1 is the same host, https://localhost (443) is not.
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost';
  expect(await publishOne(new FakeNetwork(), 'http://127.0.0.1/000000000000/orders')).toMatchObject({
    status: 'unavailable',
  });
  expect(await publishOne(new FakeNetwork(), 'https://localhost/000000000000/orders')).toMatchObject({
    status: 'retryable',
  });
  // Only loopback names are aliases: another name on the endpoint's port is another host.
  expect(await publishOne(new FakeNetwork(), 'http://127.0.0.2/000000000000/orders')).toMatchObject({
    status: 'retryable',
  });
});

test("a queue URL the endpoint answered (GetQueueUrl, CreateQueue) is the endpoint's, whatever its host", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  // ElasticMQ answers with its node address, a VPC endpoint with the regional host.
  const network = new FakeNetwork({
    GetQueueUrl: { QueueUrl: 'http://sqs-node:9324/000000000000/orders' },
    CreateQueue: { QueueUrl: `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/created` },
    GetQueueAttributes: { Attributes: { QueueArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:created` } },
  });
  const connection = new SqsConnection({ client: network.client() });
  const looked = await publishOne(network, 'orders', {}, connection);
  expect(looked.hosts).toEqual(['localhost:4566', 'sqs-node:9324']);
  expect(looked.status).toBe('unavailable');
  const other = new SqsConnection({ client: network.client() });
  const { queueUrl } = await declareQueue(other, { name: 'created' });
  expect(await publishOne(network, queueUrl, {}, other)).toMatchObject({ status: 'unavailable' });
  // Another host the endpoint never named stays another host.
  expect(
    await publishOne(
      network,
      'http://other-node:9324/000000000000/orders',
      {},
      new SqsConnection({ client: network.client() }),
    ),
  ).toMatchObject({ status: 'retryable' });
});

test("the connection's credential provider failing is the connection's, for a queue on any host: unavailable", async () => {
  const network = new FakeNetwork();
  const outcome = await publishOne(network, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`, {
    credentials: () =>
      Promise.reject(
        Object.assign(new Error('no credentials in the chain'), { name: 'CredentialsProviderError' }),
      ),
  });
  expect(outcome.hosts).toEqual([]);
  expect(outcome.status).toBe('unavailable');
});

test("a credential provider that does not answer is the connection's, for a queue on any host: unavailable", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  const connection = new SqsConnection({
    region: 'us-east-1',
    credentials: () => new Promise(() => undefined),
    maxAttempts: 1,
  });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
  try {
    // Eleven: the second batch finds the deadline passed before its request.
    const destination = `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/orders`;
    const outcomes = await publisher.publish(outboxMessages(11, destination), neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(new Array(11).fill('unavailable'));
  } finally {
    await publisher.close();
    await connection.close();
  }
});
