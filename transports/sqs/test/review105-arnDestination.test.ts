/**
 * A queue given as its ARN (`arn:aws:sqs:region:account:name`, as SNS subscriptions, IAM policies
 * and RedrivePolicy name queues) where ferry takes a URL or a name: it was looked up as a queue
 * name with GetQueueUrl, which can never find it, and each event routed there was retried until
 * maxRetries ended it FAILED. So was any destination that is no queue name SQS takes (a space, a
 * slash). The connection's client speaks to one region, so an ARN is not resolved (another
 * region's queue of that name could answer): it is refused at once, naming the URL to give.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FerryConfigError } from '@ferry/core';
import { SqsConnection, SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import { countRequests, neverAborted, openConnection, outboxMessages } from './support/sqs';

const ARN = 'arn:aws:sqs:us-east-1:123456789012:orders';
const URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/orders';

describe('SQS: a queue given as its ARN or as no queue name', () => {
  let connection: SqsConnection;

  beforeAll(async () => {
    connection = openConnection();
    await connection.connect();
  });

  afterAll(async () => {
    await connection.close();
  });

  it("reports an event whose destination is a queue ARN permanent at once, naming the queue's URL", async () => {
    const lookups = countRequests(connection, 'GetQueueUrlCommand');
    try {
      const publisher = new SqsPublisher(connection);
      const [arn, cn, slash, spaced] = [
        ...outboxMessages(1, ARN),
        ...outboxMessages(1, 'arn:aws-cn:sqs:cn-north-1:123456789012:orders.fifo'),
        ...outboxMessages(1, '123456789012/orders'),
        ...outboxMessages(1, 'orders queue'),
      ];
      const outcomes = await publisher.publish([arn!, cn!, slash!, spaced!], neverAborted());
      expect(outcomes).toEqual([
        {
          id: arn!.id,
          status: 'permanent',
          error: expect.stringContaining(`is a queue ARN: give its URL, ${URL}`),
        },
        {
          id: cn!.id,
          status: 'permanent',
          error: expect.stringContaining('https://sqs.cn-north-1.amazonaws.com.cn/123456789012/orders.fifo'),
        },
        { id: slash!.id, status: 'permanent', error: expect.stringContaining('is no queue URL or name') },
        { id: spaced!.id, status: 'permanent', error: expect.stringContaining('is no queue URL or name') },
      ]);
      expect(lookups.count()).toBe(0);
    } finally {
      lookups.stop();
    }
  });

  it('refuses a queue ARN as a route, the default destination or the consumer queue', () => {
    expect(() => new SqsPublisher(connection, { defaultDestination: ARN })).toThrow(FerryConfigError);
    expect(() => new SqsPublisher(connection, { defaultDestination: ARN })).toThrow(
      `invalid option defaultDestination: "${ARN}" is a queue ARN: give its URL, ${URL}`,
    );
    expect(() => new SqsPublisher(connection, { routes: { 'order.placed': 'a b' } })).toThrow(
      /invalid option routes\.order\.placed: "a b" is no queue URL or name/,
    );
    expect(() =>
      attachSqsConsumer({ maxPayloadBytes: 1, acceptMany: async () => [] } as never, {
        connection,
        queueUrl: ARN,
        consumer: 'orders',
      }),
    ).toThrow(`invalid option queueUrl: "${ARN}" is a queue ARN: give its URL, ${URL}`);
  });
});
