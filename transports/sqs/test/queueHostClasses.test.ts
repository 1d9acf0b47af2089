/**
 * The other side of review 58's rules (README, "Queue hosts"): what is clearly another
 * destination stays charged (`retryable`), and what may be SQS or the network down is an outage
 * (`unavailable`). Every request is refused (FakeNetwork) unless a test answers it.
 */
import { Readable } from 'node:stream';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { FakeNetwork, withoutConfiguredEndpoints } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

withoutConfiguredEndpoints();

type Config = Omit<SQSClientConfig, 'requestHandler' | 'maxAttempts'>;
const ACCOUNT = '123456789012';

async function statusOf(
  destination: string,
  config: Config = {},
  network = new FakeNetwork(),
): Promise<string> {
  const connection = new SqsConnection({ client: network.client(config) });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [outcome] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    return outcome!.status;
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
}

test("another region's dual-stack, FIPS, legacy and VPC endpoint hosts stay other hosts: retryable", async () => {
  for (const url of [
    `https://sqs.eu-west-1.api.aws/${ACCOUNT}/orders`,
    `https://sqs-fips.us-west-2.amazonaws.com/${ACCOUNT}/orders`,
    `https://eu-west-1.queue.amazonaws.com/${ACCOUNT}/orders`,
    `https://vpce-0abc-xyz.sqs.eu-west-1.vpce.amazonaws.com/${ACCOUNT}/orders`,
    `https://sqs.cn-north-1.amazonaws.com.cn/${ACCOUNT}/orders`,
    // An AWS host of the region on a port SQS does not serve: a typo'd URL.
    `https://sqs.us-east-1.amazonaws.com:8443/${ACCOUNT}/orders`,
    // Not AWS's at all.
    `https://sqs.us-east-1.amazonaws.com.example.org/${ACCOUNT}/orders`,
  ]) {
    expect({ url, status: await statusOf(url) }).toEqual({ url, status: 'retryable' });
  }
  // queue.amazonaws.com is us-east-1's legacy host: another region's for a eu-west-1 connection.
  expect(await statusOf(`https://queue.amazonaws.com/${ACCOUNT}/orders`, { region: 'eu-west-1' })).toBe(
    'retryable',
  );
});

test("the region's own VPC endpoint host is the region's SQS: unavailable", async () => {
  const url = `https://vpce-0abc-xyz.sqs.us-east-1.vpce.amazonaws.com/${ACCOUNT}/orders`;
  expect(await statusOf(url)).toBe('unavailable');
});

/** A client over a network where every host answers every request with `status` and `code`. */
function refusingClient(status: number, code: string): SQSClient {
  const handler = {
    handle: async () => ({
      response: {
        statusCode: status,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': `${code};Sender` },
        body: Readable.from([
          Buffer.from(JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message: code })),
        ]),
      },
    }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
  return new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    requestHandler: handler as unknown as NonNullable<SQSClientConfig['requestHandler']>,
  });
}

test("a foreign host refusing the connection's credentials is not charged; refusing its own permission is", async () => {
  const destination = `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`;
  for (const [status, code, expected] of [
    [403, 'InvalidClientTokenId', 'unavailable'],
    [400, 'SignatureDoesNotMatch', 'unavailable'],
    [403, 'AccessDenied', 'retryable'],
  ] as const) {
    const client = refusingClient(status, code);
    const connection = new SqsConnection({ client });
    const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
    try {
      const [outcome] = await publisher.publish(outboxMessages(1, destination), neverAborted());
      expect({ code, status: outcome!.status }).toEqual({ code, status: expected });
    } finally {
      await publisher.close();
      await connection.close();
      client.destroy();
    }
  }
});

test("a GetQueueUrl answer makes only that queue URL the endpoint's, not every URL on its host", async () => {
  process.env.AWS_ENDPOINT_URL_SQS = 'http://localhost:4566';
  const network = new FakeNetwork({ GetQueueUrl: { QueueUrl: 'http://sqs-node:9324/000000000000/audit' } });
  const connection = new SqsConnection({ client: network.client() });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    expect(await connection.queueUrl('audit')).toBe('http://sqs-node:9324/000000000000/audit');
    // Separate calls: the endpoint's failure in a call spares the call's other hosts.
    const [other] = await publisher.publish(
      outboxMessages(1, 'http://sqs-node:9324/000000000000/other'),
      neverAborted(),
    );
    expect(other).toMatchObject({ status: 'retryable' });
    // The named queue's host refusing: the endpoint's (it answered that URL), an outage.
    const [named] = await publisher.publish(outboxMessages(1, 'audit'), neverAborted());
    expect(named).toMatchObject({ status: 'unavailable' });
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
});

test('a hung region provider (no endpoint in code) ends the publish at its deadline, and is asked again', async () => {
  let regionCalls = 0;
  const network = new FakeNetwork();
  const connection = new SqsConnection({
    client: network.client({
      region: (): Promise<string> => {
        regionCalls += 1;
        return regionCalls === 1 ? new Promise<string>(() => undefined) : Promise.resolve('us-east-1');
      },
    }),
  });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
  try {
    const destination = `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`;
    const [first] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    // Unknown whether its host is the endpoint's: an outage, never charged.
    expect(first).toMatchObject({ status: 'unavailable' });
    const [later] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    expect(later).toMatchObject({ status: 'retryable' });
    expect(network.hosts).toContain('sqs.eu-west-1.amazonaws.com:443');
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
});

test("the endpoint down in the same call: a foreign FIFO key's later messages and a failed name lookup's call are not charged", async () => {
  const network = new FakeNetwork();
  const connection = new SqsConnection({ client: network.client() });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    // Eleven messages of one ordering key on a foreign FIFO queue (the eleventh, in a second batch,
    // follows the first's failure), and a queue name (looked up at the endpoint, which refuses).
    const fifo = outboxMessages(11, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders.fifo`, {
      orderingKey: 'customer-1',
    });
    const [named] = outboxMessages(1, 'audit');
    const outcomes = await publisher.publish([...fifo, named!], neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(new Array(12).fill('unavailable'));
    expect(outcomes[10]).toMatchObject({
      error: expect.stringContaining('an earlier message of ordering key') as unknown,
    });
    // Without the endpoint's failure in the call, the foreign key's messages are charged.
    const alone = await publisher.publish(fifo, neverAborted());
    expect(alone.map((o) => o.status)).toEqual(new Array(11).fill('retryable'));
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
});

test('with an endpoint given in code no provider is asked to judge a queue host', async () => {
  const network = new FakeNetwork();
  const connection = new SqsConnection({ client: network.client({ endpoint: 'http://127.0.0.1:4566' }) });
  const asked = jest.spyOn(connection, 'signingRegion');
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [outcome] = await publisher.publish(
      outboxMessages(1, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/orders`),
      neverAborted(),
    );
    expect(network.hosts).toEqual(['127.0.0.1:4566']);
    expect(outcome).toMatchObject({ status: 'unavailable' });
    expect(asked).not.toHaveBeenCalled();
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
});
