import { FERRY_HEADERS } from '@ferry/core';
import { SqsPublisher, attachSqsConsumer, declareQueue, deleteQueue } from '@ferry/sqs';
import { runTransportConformance, type DeadLetter } from '@ferry/testing/conformance';
import { drainOnce, heldMessages, openConnection, sendRaw, uniqueName } from './support/sqs';

/** SQS's lacking features state their reasons below; the suite shows them as skipped cases. */
runTransportConformance({
  name: 'sqs',
  transport: 'sqs',
  system: 'aws_sqs',
  features: {
    deadLetter: true,
    orderingPerKey: {
      unsupported:
        'SQS orders only on a FIFO queue, which drops a message whose deduplication id (the event id) it saw in the last 5 minutes, so the duplicates case could not run on the one destination; FIFO ordering per group is tested in consumer.test.ts',
    },
    redeliveryAfterRestart: {
      unsupported:
        'SQS has no connection to break (every request is its own HTTP call) and the shared ElasticMQ may not be restarted by a test; fault-tests/broker-recovery restarts a private one',
    },
    unroutableDetection: true,
    heldCount: true,
  },
  timeoutMs: 30_000,
  async createTransport({ publisherObserver }) {
    const connection = openConnection();
    const queue = await declareQueue(connection, { name: uniqueName('conf') });
    const dead = await declareQueue(connection, { name: uniqueName('conf-dead') });
    const deadLetters: DeadLetter[] = [];
    return {
      publisher: new SqsPublisher(connection, { observer: publisherObserver }),
      destination: queue.queueUrl,
      source: queue.queueUrl,
      unroutableDestination: uniqueName('nowhere'),
      async attach(acceptor, { consumer, observer }) {
        const attached = attachSqsConsumer(acceptor, {
          connection,
          queueUrl: queue.queueUrl,
          consumer,
          observer,
          waitTimeSeconds: 1,
          // close() aborts the long poll, but the endpoint may still hand that poll a message sent
          // within waitTimeSeconds; it stays hidden for the visibility timeout, then the next
          // consumer gets it. A short timeout keeps the close case quick (see the README's close()).
          visibilityTimeoutSeconds: 2,
          retryBackoff: { initialMs: 1_000, maxMs: 1_000, jitter: 'none' },
          identity: () => null,
          deadLetter: { mode: 'queue', queueUrl: dead.queueUrl },
        });
        await attached.ready();
        return attached;
      },
      async publishRaw(message) {
        await sendRaw(connection, queue.queueUrl, message.body.toString(), {
          ...message.headers,
          ...(message.messageId !== undefined ? { [FERRY_HEADERS.messageId]: message.messageId } : {}),
        });
      },
      async readDeadLetters() {
        for (const letter of await drainOnce(connection, dead.queueUrl)) {
          deadLetters.push({
            messageId: letter.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue ?? null,
            reason: letter.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue ?? null,
          });
        }
        return [...deadLetters];
      },
      heldCount: () => heldMessages(connection, queue.queueUrl),
      async cleanup() {
        await deleteQueue(connection, queue.queueUrl);
        await deleteQueue(connection, dead.queueUrl);
        await connection.close();
      },
    };
  },
});
