import { FERRY_HEADERS } from '@ferry/core';
import { SqsPublisher, attachSqsConsumer, declareQueue, deleteQueue } from '@ferry/sqs';
import { runTransportConformance, type DeadLetter } from '@ferry/testing/conformance';
import { drainOnce, openConnection, sendRaw, uniqueName } from './support/sqs';

/**
 * SQS's features:
 * - orderingPerKey: false. SQS orders only on a FIFO queue, and a FIFO queue drops a message
 *   whose deduplication id (ferry's event id) it saw in the last 5 minutes, so the suite's
 *   "duplicates published on purpose" case could never see its 30 deliveries on the one
 *   destination the suite uses. FIFO ordering per group is tested in consumer.test.ts.
 * - redeliveryAfterRestart: false. SQS has no connection to break: every request is its own
 *   HTTP call, and the shared ElasticMQ may not be restarted by a test.
 */
runTransportConformance({
  name: 'sqs',
  features: {
    deadLetter: true,
    orderingPerKey: false,
    redeliveryAfterRestart: false,
    unroutableDetection: true,
  },
  timeoutMs: 30_000,
  async createTransport() {
    const connection = openConnection();
    const queue = await declareQueue(connection, { name: uniqueName('conf') });
    const dead = await declareQueue(connection, { name: uniqueName('conf-dead') });
    const deadLetters: DeadLetter[] = [];
    return {
      publisher: new SqsPublisher(connection),
      destination: queue.queueUrl,
      unroutableDestination: uniqueName('nowhere'),
      async attach(acceptor, { consumer }) {
        const attached = attachSqsConsumer(acceptor, {
          connection,
          queueUrl: queue.queueUrl,
          consumer,
          waitTimeSeconds: 1,
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
      async cleanup() {
        await deleteQueue(connection, queue.queueUrl);
        await deleteQueue(connection, dead.queueUrl);
        await connection.close();
      },
    };
  },
});
