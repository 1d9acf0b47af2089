/**
 * Review 58: with no endpoint configured, which AWS hosts are "the region's AWS SQS" (README,
 * "Queue hosts"). Each case below is a queue URL the SDK sends to AWS SQS of the connection's own
 * region, often to the very host its ListQueues goes to, and the publisher calls it another host:
 * during a regional SQS outage its events are charged (`retryable`) and end FAILED at maxRetries,
 * the outcome the outage contract exists to prevent. Every request is refused (FakeNetwork), as
 * during an outage; `hosts` shows where the SDK sent it.
 */
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { FakeNetwork, withoutConfiguredEndpoints } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

withoutConfiguredEndpoints();

type Config = Omit<SQSClientConfig, 'requestHandler' | 'maxAttempts'>;

/** Where the connection's own request (ListQueues, connect()) goes: the SDK's endpoint. */
async function endpointHost(config: Config): Promise<string> {
  const network = new FakeNetwork();
  const connection = new SqsConnection({ client: network.client(config) });
  await connection.connect().catch(() => undefined);
  await connection.close();
  return network.hosts[0]!;
}

/** Publishes one event to `destination` while every host refuses: its status and host. */
async function publishOne(
  destination: string,
  config: Config = {},
): Promise<{ status: string; host: string }> {
  const network = new FakeNetwork();
  const connection = new SqsConnection({ client: network.client(config) });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [outcome] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    return { status: outcome!.status, host: network.hosts[0]! };
  } finally {
    await publisher.close();
    await connection.close();
  }
}

const ACCOUNT = '123456789012';

// A user who turned on dual-stack (IPv6) sees the region's outage FAIL every event whose queue URL
// is the dual-stack one, although it is exactly the host the SDK itself chose as the endpoint.
test("dual-stack: a queue URL on the SDK's own dual-stack endpoint is the endpoint's (unavailable)", async () => {
  const config: Config = { useDualstackEndpoint: true };
  expect(await endpointHost(config)).toBe('sqs.us-east-1.api.aws:443');
  const outcome = await publishOne(`https://sqs.us-east-1.api.aws/${ACCOUNT}/orders`, config);
  expect(outcome.host).toBe('sqs.us-east-1.api.aws:443');
  // Observed: retryable ("is not the connection's endpoint (AWS SQS of region us-east-1)").
  expect(outcome.status).toBe('unavailable');
});

// Users in AWS's other partitions (ISO, EU sovereign cloud) see every event of a regional outage
// FAILED: the region's SQS host is only recognised under amazonaws.com(.cn).
test("other partitions: the region's own SQS host (the SDK's endpoint) is the endpoint's (unavailable)", async () => {
  for (const [region, host] of [
    ['us-iso-east-1', 'sqs.us-iso-east-1.c2s.ic.gov'],
    ['eusc-de-east-1', 'sqs.eusc-de-east-1.amazonaws.eu'],
  ] as const) {
    expect(await endpointHost({ region })).toBe(`${host}:443`);
    const outcome = await publishOne(`https://${host}/${ACCOUNT}/orders`, { region });
    expect(outcome.host).toBe(`${host}:443`);
    // Observed: retryable for both.
    expect({ region, status: outcome.status }).toEqual({ region, status: 'unavailable' });
  }
});

// A queue URL written with a user and password (ferry strips them from its errors, so it expects
// them): the SDK drops them and sends the request to the regional endpoint itself, yet the
// publisher charges the events during the region's outage.
test('a queue URL with userinfo on the regional host goes to the endpoint: unavailable', async () => {
  const outcome = await publishOne(`https://user:secret@sqs.us-east-1.amazonaws.com/${ACCOUNT}/orders`);
  expect(outcome.host).toBe(await endpointHost({}));
  // Observed: retryable (the regular expression of awsQueueRegion wants `sqs` right after `//`).
  expect(outcome.status).toBe('unavailable');
});

// README: "A host is the same when its name (any case, a trailing dot ignored) ...". A fully
// qualified queue URL (trailing dot) of the region's host is charged during its outage.
test("the region's host written with a trailing dot is the endpoint's: unavailable", async () => {
  const outcome = await publishOne(`https://sqs.us-east-1.amazonaws.com./${ACCOUNT}/orders`);
  expect(outcome.host).toBe('sqs.us-east-1.amazonaws.com.:443');
  // Observed: retryable.
  expect(outcome.status).toBe('unavailable');
});

// Queue URLs copied from older consoles, SDKs and CloudFormation outputs use SQS's legacy hosts
// (`queue.amazonaws.com` for us-east-1, `<region>.queue.amazonaws.com`), which SQS of that region
// still serves: during the region's outage their events are charged and end FAILED.
test("SQS's legacy hosts of the connection's region are the endpoint's: unavailable", async () => {
  for (const [region, url] of [
    ['us-east-1', `https://queue.amazonaws.com/${ACCOUNT}/orders`],
    ['us-east-1', `https://us-east-1.queue.amazonaws.com/${ACCOUNT}/orders`],
    ['eu-west-1', `https://eu-west-1.queue.amazonaws.com/${ACCOUNT}/orders`],
  ] as const) {
    const outcome = await publishOne(url, { region });
    // Observed: retryable for each.
    expect({ url, status: outcome.status }).toEqual({ url, status: 'unavailable' });
  }
});
