/**
 * Review 33 (hostile review of 6dd220d, the SQS publisher's UnansweredLedger).
 *
 * Defect: a silent SQS outage charges an attempt. The ledger charges a message "unanswered again
 * after SQS answered other requests since its last try", counting answers given at any time since,
 * also before the outage now in progress. A message left unanswered by one short outage (or any one
 * lost answer) that SQS then answers others for, is `retryable` on its first try in the next silent
 * outage: nothing at all is answered during that try, and it is charged as a message "too slow to
 * upload". A network that drops packets now and then (each drop a silent outage) spends an attempt
 * per message per outage, and the relay turns healthy events FAILED at maxRetries, as it did before
 * review 19.
 *
 * Contract (transports/sqs/README.md): "no answer within `confirmTimeoutMs` (the request is
 * abandoned; a network that drops packets) ... `unavailable`: nothing in a message makes SQS
 * withhold its answer, so a silent outage spends no attempt (it turned events FAILED as a refused
 * connection never did)"; the review 19 contract (review19-silentOutage.test.ts): "a silent SQS
 * endpoint spends no attempt of a healthy event". The size rule is for a message SQS cannot take
 * "while small ones are answered" (slowUpload.test.ts); here the message is tiny and nothing is
 * answered while it is tried.
 */
import type { OutboxMessage } from '@ferry/core';
import { SqsPublisher, declareQueue, deleteQueue } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { SQS_ENDPOINT, openConnection, outboxMessages, proxiedConnection, uniqueName } from './support/sqs';

jest.setTimeout(60_000);

test('a tiny message tried during a second silent outage spends no attempt (unavailable, as in the first)', async () => {
  const endpoint = new URL(SQS_ENDPOINT);
  const direct = openConnection();
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  const { queueUrl } = await declareQueue(direct, { name: uniqueName('second-outage') });
  const connection = proxiedConnection(proxy);
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 1_000 });
  const destination = proxy.urlFor(queueUrl);
  const statuses = async (messages: readonly OutboxMessage[]) =>
    (await publisher.publish(messages, new AbortController().signal)).map((o) => o.status);
  try {
    const [event] = outboxMessages(1, destination);
    // A first silent outage (packets dropped): unavailable, no attempt spent.
    await proxy.setMode('blackhole');
    expect(await statuses([event!])).toEqual(['unavailable']);
    // The network is back: SQS answers the relay's other publishes.
    await proxy.setMode('pass');
    expect(await statuses(outboxMessages(2, destination))).toEqual(['sent', 'sent']);
    // A second silent outage, before the event's next cycle: nothing is answered at all.
    await proxy.setMode('blackhole');
    // Now: ['retryable']: the tiny event is charged an attempt by the outage.
    expect(await statuses([event!])).toEqual(['unavailable']);
  } finally {
    await publisher.close();
    await connection.close();
    await proxy.close();
    await deleteQueue(direct, queueUrl);
    await direct.close();
  }
});
