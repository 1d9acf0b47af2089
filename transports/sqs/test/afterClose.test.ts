/**
 * Once close() of a publisher or consumer resolved, nothing of it runs any more (watchAfterClose:
 * no timer of it fires, whichever code set it, the SDK's included, no socket of it opens, no log
 * line, no event), also when close() came while SQS was unreachable: during the SDK's retries of
 * a request (its own waits between attempts) and the consumer's backoff between receives.
 */
import type { InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent, TransportPublisherEvent } from '@ferry/core/transport';
import { attachSqsConsumer, SqsPublisher, type SqsConnection } from '../src';
import { closedPort } from '../../../test-support/closedPort';
import { NOTHING_AFTER_CLOSE, watchAfterClose, type AfterClose } from '../../../test-support/afterClose';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import {
  endpointConnection,
  openConnection,
  outboxMessages,
  sendRaw,
  TestQueues,
  uniqueName,
  waitFor,
} from './support/sqs';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const CLOSE_TIMEOUT_MS = 300;
/** Longer than any wait of the objects here: the watch ends earlier, once no timer of the object is pending. */
const WATCHED = { deadlineMs: 10_000, windowMs: 8_000 };

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: () => Promise.reject(new Error('nothing is delivered')),
};

/** A connection to a port nothing listens on, with the SDK's retries (10 attempts a request: close() comes between two). */
async function unreachable(watch: AfterClose): Promise<{ connection: SqsConnection; queueUrl: string }> {
  const endpoint = `http://127.0.0.1:${await closedPort()}`;
  const connection = endpointConnection(endpoint, { maxAttempts: 10, logger: watch.logger });
  return { connection, queueUrl: `${endpoint}/000000000000/after-close` };
}

const owners = {
  'a publisher, a publish in flight': (watch: AfterClose, connection: SqsConnection, queueUrl: string) => {
    const publisher = new SqsPublisher(connection, {
      defaultDestination: queueUrl,
      logger: watch.logger,
      observer: watch.observer<TransportPublisherEvent>(),
    });
    void publisher.publish(outboxMessages(1, null), new AbortController().signal);
    return publisher;
  },
  'a consumer, receiving': (watch: AfterClose, connection: SqsConnection, queueUrl: string) => {
    const consumer = attachSqsConsumer(acceptor, {
      connection,
      queueUrl,
      consumer: 'afterClose',
      reconnectBackoff: { initialMs: 200, maxMs: 400, jitter: 'none' },
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      logger: watch.logger,
      observer: watch.observer<TransportConsumerEvent>(),
    });
    void consumer.ready().catch(() => undefined);
    return consumer;
  },
};

test.each(Object.keys(owners) as (keyof typeof owners)[])(
  '%s, closed while SQS is unreachable',
  async (name) => {
    const watch = watchAfterClose();
    const { connection, queueUrl } = await unreachable(watch);
    try {
      const owner = watch.own(() => owners[name](watch, connection, queueUrl));
      // A second connect: the SDK retries (or the consumer's backoff ended), its wait between them begun.
      await waitFor('a second connect attempt', () => (watch.connects() >= 2 ? true : undefined));
      expect(await watch.close(() => owner.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
    } finally {
      watch.stop();
      await connection.close();
    }
  },
);

test('a consumer closed past closeTimeoutMs, its batch unaccepted', async () => {
  const admin = openConnection();
  const queues = new TestQueues(admin);
  const watch = watchAfterClose();
  // The consumer's connection is the application's: made outside the watched consumer.
  const connection = openConnection();
  let offered = 0;
  try {
    const { queueUrl } = await queues.declare({ name: uniqueName('after-close') });
    await sendRaw(admin, queueUrl, '{}');
    const consumer = watch.own(() =>
      attachSqsConsumer(
        {
          maxPayloadBytes: 1024,
          // An acceptance that never answers (a database holding a lock): close() gives up on it.
          acceptMany: () => {
            offered += 1;
            return new Promise(() => undefined);
          },
        },
        {
          connection,
          queueUrl,
          consumer: 'afterClose',
          waitTimeSeconds: 1,
          closeTimeoutMs: CLOSE_TIMEOUT_MS,
          logger: watch.logger,
          observer: watch.observer<TransportConsumerEvent>(),
        },
      ),
    );
    await waitFor('the batch to be offered', () => (offered > 0 ? true : undefined));
    expect(await watch.close(() => consumer.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
  } finally {
    watch.stop();
    await queues.cleanup();
    await connection.close();
    await admin.close();
  }
});
