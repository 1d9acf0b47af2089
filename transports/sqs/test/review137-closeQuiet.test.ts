/**
 * Review 137: close() gives up on a batch whose settle SQS does not answer (closeTimeoutMs), and
 * resolves; the batch it gave up on then ends on its own, its requests aborted. Its events ended
 * with close()'s (review 124), its log lines did not: the dead-letter copy aborted by close() was
 * logged as an error ('dead-letter copies failed') after close() resolved, as were the warnings of
 * the steps that followed; and the acceptance of its valid messages, not begun yet, began after
 * close() resolved (a transaction on an inbox the application may be closing by then).
 */
import { expect, it, jest } from '@jest/globals';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { writtenLog } from '../../../test-support/writtenLog';
import { SQS_ENDPOINT, proxiedConnection, sendRawBatch, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

failOnUnhandledRejections();
jest.setTimeout(30_000);

const fixture = useSqsQueuesFixture();

/**
 * A consumer whose first batch (a message that is not JSON, then a valid one) has its dead-letter
 * copy go unanswered (SQS silent as the batch arrives), closed (closeTimeoutMs 300) meanwhile;
 * returns what it logged and accepted after close() resolved, once its aborted requests ended, and
 * what it logged before (its observer throws at close()'s `disconnected`).
 */
async function afterGivenUpClose(): Promise<{ logged: string; accepted: number; beforeClose: string }> {
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('quiet') });
  const { queueUrl: deadUrl } = await fixture.queues.declareBare({ name: uniqueName('quiet-dead') });
  await sendRawBatch(fixture.connection, queueUrl, ['not json', '{"n":1}']);
  const endpoint = new URL(SQS_ENDPOINT);
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  try {
    const connection = proxiedConnection(proxy);
    fixture.opened.push(connection);
    const log = writtenLog();
    const acceptor = traceRecordingAcceptor();
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection,
      queueUrl: proxy.urlFor(queueUrl),
      consumer: 'billing',
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 20,
      closeTimeoutMs: 300,
      deadLetter: { mode: 'queue', queueUrl: proxy.urlFor(deadUrl).replace(/\/$/, '') },
      logger: log.logger,
      observer: (event) => {
        events.push(event);
        // SQS goes silent as the batch arrives: its dead-letter copy goes unanswered.
        if (event.type === 'received') void proxy.setMode('blackhole');
        if (event.type === 'disconnected') throw new Error('observer broke on close');
      },
    });
    await waitFor('the batch received', () => (events.some((e) => e.type === 'received') ? true : undefined));
    await waitFor('its dead-letter copy sent', () =>
      log.text().includes('dead-lettering it') ? true : undefined,
    );
    await consumer.close();
    const atClose = { logged: log.text().length, accepted: acceptor.accepted.length };
    // The aborted requests end within a few turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 500));
    return {
      beforeClose: log.text().slice(0, atClose.logged),
      logged: log.text().slice(atClose.logged),
      accepted: acceptor.accepted.length - atClose.accepted,
    };
  } finally {
    await proxy.close();
  }
}

it('a batch close() gave up on while its dead-letter copy went unanswered logs nothing after close() resolved', async () => {
  expect((await afterGivenUpClose()).logged).toBe('');
});

it("an observer's failure at close()'s own event is still logged, before close() resolves", async () => {
  expect((await afterGivenUpClose()).beforeClose).toContain('ferry observer threw');
});

it('a batch close() gave up on before its acceptance began starts no acceptance after close() resolved', async () => {
  expect((await afterGivenUpClose()).accepted).toBe(0);
});
