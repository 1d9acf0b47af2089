/**
 * consumer.check(), the readiness probe of an SQS consumer (review 71): down until SQS first
 * answered for the queue, up while the consumer polls, down while its polls fail (SQS unreachable:
 * every connection through the proxy reset, new ones refused), up again at the first answer after,
 * FERRY_CLOSED once closed. ready() stays the start-up gate. Real ElasticMQ through the fault
 * harness's TCP proxy.
 */
import { describe, expect, it } from '@jest/globals';
import { ConsumerDisconnectedError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, type SqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { SQS_ENDPOINT, proxiedConnection, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

jest.setTimeout(60_000);

/** What check() answers now: 'up', or the rejection. */
const probe = (consumer: SqsConsumer): Promise<unknown> =>
  consumer.check().then(
    () => 'up',
    (error: unknown) => error,
  );

describe('an SQS consumer’s check()', () => {
  const fixture = useSqsQueuesFixture();

  it('is down until SQS answered, up while polling, down while SQS is unreachable, up again after', async () => {
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('check') });
    const endpoint = new URL(SQS_ENDPOINT);
    const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
    try {
      await proxy.setMode('refuse');
      const connection = proxiedConnection(proxy);
      fixture.opened.push(connection);
      const events: TransportConsumerEvent[] = [];
      const acceptor = traceRecordingAcceptor();
      const proxiedUrl = proxy.urlFor(queueUrl);
      const consumer = attachSqsConsumer(acceptor, {
        connection,
        queueUrl: proxiedUrl,
        consumer: 'billing',
        waitTimeSeconds: 1,
        reconnectBackoff: { initialMs: 50, maxMs: 200, jitter: 'none' },
        observer: (event) => void events.push(event),
      });
      fixture.consumers.push(consumer);
      const what = `SQS consumer billing of queue ${proxiedUrl}`;

      await waitFor('a failed attach', () =>
        events.some((e) => e.type === 'disconnected') ? true : undefined,
      );
      const before = await probe(consumer);
      expect(before).toBeInstanceOf(ConsumerDisconnectedError);
      expect(before).toMatchObject({ code: 'FERRY_TRANSPORT_ERROR', consumer: what });
      expect(
        (before as Error).message.startsWith(
          `${what} is not connected: it has not attached yet; the last attempt failed: `,
        ),
      ).toBe(true);

      await proxy.setMode('pass');
      await consumer.ready({ timeoutMs: 20_000 });
      expect(await probe(consumer)).toBe('up');

      const failures = events.filter((e) => e.type === 'disconnected').length;
      // The listener stops at once; its close waits for the open connections, cut here.
      const refusing = proxy.setMode('refuse');
      proxy.resetAll();
      await refusing;
      await waitFor('a failed poll', () =>
        events.filter((e) => e.type === 'disconnected').length > failures ? true : undefined,
      );
      const during = await probe(consumer);
      expect(during).toBeInstanceOf(ConsumerDisconnectedError);
      expect(
        (during as Error).message.startsWith(
          `${what} is not connected: it lost its connection and has not re-attached; the last failure: `,
        ),
      ).toBe(true);
      await expect(consumer.ready({ timeoutMs: 1 })).resolves.toBeUndefined();

      await proxy.setMode('pass');
      await waitFor('check() up again', async () => ((await probe(consumer)) === 'up' ? true : undefined));
      await sendRaw(fixture.connection, queueUrl, '{"n":1}');
      await waitFor('the message after the outage accepted', () =>
        acceptor.accepted.length > 0 ? true : undefined,
      );

      await consumer.close();
      await expect(consumer.check()).rejects.toMatchObject({
        code: 'FERRY_CLOSED',
        message: `${what} is closed`,
      });
    } finally {
      await proxy.close();
    }
  });
});
