/**
 * Failed first (noted on issue 13 after review 22): a message SQS cannot receive within
 * confirmTimeoutMs because of its size on the link (here ~100 KB/s from ferry to SQS, a 200 KB
 * message, confirmTimeoutMs 1 s) was `unavailable` on every publish, while small messages on the
 * same link were answered: no attempt was ever spent, the event never became FAILED and its
 * ordering key stayed blocked behind it for ever. Its first unanswered try cannot be told from a
 * silent SQS (`unavailable`, review 19); once SQS answered other requests since, it is charged
 * (`retryable`), as on Kafka (transports/kafka/test/review15-slowUpload.test.ts).
 */
import { SqsPublisher, declareQueue, deleteQueue } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { SQS_ENDPOINT, openConnection, outboxMessages, proxiedConnection, uniqueName } from './support/sqs';

jest.setTimeout(60_000);

test('a message too big for the link within confirmTimeoutMs, while small ones are answered: charged, not unavailable for ever', async () => {
  const endpoint = new URL(SQS_ENDPOINT);
  const direct = openConnection();
  const proxy = await TcpProxy.start(
    { host: endpoint.hostname, port: Number(endpoint.port) },
    { upstreamBytesPerTick: 10_000 },
  );
  const { queueUrl } = await declareQueue(direct, { name: uniqueName('slow-upload') });
  const connection = proxiedConnection(proxy);
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 1_000 });
  const destination = proxy.urlFor(queueUrl);
  const [big] = outboxMessages(1, destination, { payload: { filler: 'x'.repeat(200_000) } });
  const seen: string[] = [];
  try {
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const [small] = outboxMessages(1, destination, { payload: { cycle } });
      const [smallOutcome] = await publisher.publish([small!], new AbortController().signal);
      seen.push(`small:${smallOutcome!.status}`);
      const [bigOutcome] = await publisher.publish([big!], new AbortController().signal);
      seen.push(`big:${bigOutcome!.status}`);
    }
    expect(seen.filter((s) => s.startsWith('small:'))).toEqual(['small:sent', 'small:sent', 'small:sent']);
    // Before: big:unavailable three times.
    expect(seen.filter((s) => s.startsWith('big:'))).toEqual([
      'big:unavailable',
      'big:retryable',
      'big:retryable',
    ]);
  } finally {
    await publisher.close();
    await connection.close();
    await proxy.close();
    await deleteQueue(direct, queueUrl);
    await direct.close();
  }
});
