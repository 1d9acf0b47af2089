/**
 * Review 58: the connection's own credentials expiring (an STS session token nobody refreshed).
 * Every host answers the same token with the same refusal, HTTP 403 `ExpiredToken`: it says
 * nothing about the destination. README: a refusal of the credentials is "a configuration error no
 * retry of the message fixes, so the relay spends no attempt". With no endpoint configured, a
 * queue URL of another region is "another host", and its refusal of the connection's expired
 * token is charged: a user whose session expired sees the cross-region events FAILED at
 * maxRetries (by the time the operator renews the credentials), while the same call's events for
 * the region's own queue, refused identically, wait unharmed.
 */
import { Readable } from 'node:stream';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { neverAborted, outboxMessages } from './support/sqs';
import { withoutConfiguredEndpoints } from './support/fakeNetwork';

withoutConfiguredEndpoints();

/** A client over a network where every host answers every request 403 ExpiredToken. */
function expiredTokenClient(hosts: string[]): SQSClient {
  const handler = {
    handle: async (request: { hostname: string }) => {
      hosts.push(request.hostname);
      return {
        response: {
          statusCode: 403,
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amzn-query-error': 'ExpiredToken;Sender',
          },
          body: Readable.from([
            Buffer.from(
              JSON.stringify({
                __type: 'com.amazon.coral.service#ExpiredTokenException',
                message: 'The security token included in the request is expired',
              }),
            ),
          ]),
        },
      };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
  return new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry', sessionToken: 'expired' },
    maxAttempts: 1,
    requestHandler: handler as unknown as NonNullable<SQSClientConfig['requestHandler']>,
  });
}

test("the connection's expired token refused by a queue's host in another region is not charged", async () => {
  const hosts: string[] = [];
  const client = expiredTokenClient(hosts);
  const connection = new SqsConnection({ client });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [own] = outboxMessages(1, 'https://sqs.us-east-1.amazonaws.com/123456789012/orders');
    const [abroad] = outboxMessages(1, 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders');
    const outcomes = await publisher.publish([own!, abroad!], neverAborted());
    expect(hosts.sort()).toEqual(['sqs.eu-west-1.amazonaws.com', 'sqs.us-east-1.amazonaws.com']);
    // Both refused the same token with the same answer, in the same call.
    expect(outcomes[0]).toMatchObject({ status: 'unavailable' });
    // Observed: retryable ("... ExpiredToken ...; the queue's host sqs.eu-west-1.amazonaws.com:443
    // is not the connection's endpoint ...: an attempt spent").
    expect(outcomes[1]).toMatchObject({ status: 'unavailable' });
  } finally {
    await publisher.close();
    await connection.close();
    client.destroy();
  }
});
