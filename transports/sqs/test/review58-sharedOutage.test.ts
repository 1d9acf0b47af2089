/**
 * Review 58 (a contract objection, not a slip of the code: the README's new row charges a foreign
 * host's refusal whatever else happened). The application's own network fails (its NAT gateway or
 * DNS resolver is down): no host answers. With no endpoint configured (region us-east-1), one
 * publish call holds an event for the region's queue and one for a queue in eu-west-1. The region's
 * own SQS refusing in that very call proves SQS unreachable from here; the eu-west-1 host refusing
 * the same way says nothing against that destination. A user sees the cross-region events charged
 * at every cycle of the outage and FAILED at maxRetries, while the region's events wait unharmed.
 */
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import { FakeNetwork, withoutConfiguredEndpoints } from './support/fakeNetwork';
import { neverAborted, outboxMessages } from './support/sqs';

withoutConfiguredEndpoints();

test('a foreign host failing in a call where the endpoint itself failed as an outage is not charged', async () => {
  const network = new FakeNetwork();
  const connection = new SqsConnection({ client: network.client() });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const [own] = outboxMessages(1, 'https://sqs.us-east-1.amazonaws.com/123456789012/orders');
    const [abroad] = outboxMessages(1, 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders');
    const outcomes = await publisher.publish([own!, abroad!], neverAborted());
    expect(network.hosts.sort()).toEqual([
      'sqs.eu-west-1.amazonaws.com:443',
      'sqs.us-east-1.amazonaws.com:443',
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'unavailable' });
    // Observed: retryable (an attempt spent) in the call that showed SQS unreachable.
    expect(outcomes[1]).toMatchObject({ status: 'unavailable' });
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
  }
});
