import { FERRY_HEADERS } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  declareWorkQueue,
  deleteWorkQueue,
  workQueueNames,
} from '@ferry/rabbitmq';
import { runTransportConformance, type DeadLetter } from '@ferry/testing/conformance';
import { AMQP_URL, closeConnectionsNamed, openTestBroker, uniqueName } from './support/broker';

/** Every connection this file opens carries this name, so restartBroker can close them all. */
const connectionName = uniqueName('conformance');
const retryBackoff = { initialMs: 100, maxMs: 200 };
/** The retry tiers the consumer derives from retryBackoff and the default retry limit. */
const retryTiersMs = [100, 200];

runTransportConformance({
  name: 'rabbitmq',
  transport: 'rabbitmq',
  system: 'rabbitmq',
  features: {
    deadLetter: true,
    orderingPerKey: true,
    redeliveryAfterRestart: true,
    unroutableDetection: true,
    heldCount: true,
  },
  // A broker-side close of our own connections: the shared RabbitMQ is not restarted in normal tests.
  restartBroker: async () => {
    await closeConnectionsNamed(connectionName);
  },
  async createTransport({ publisherObserver }) {
    const queue = uniqueName('conf');
    const nowhere = `${queue}.nowhere`;
    const broker = await openTestBroker();
    await declareWorkQueue(broker.channel, { queue, retryTiersMs });
    await broker.channel.assertExchange(nowhere, 'fanout', { durable: false, autoDelete: false });
    const connection = new RabbitConnection({
      url: AMQP_URL,
      connectionName,
      reconnectBackoff: { initialMs: 50, maxMs: 500 },
    });
    const publisher = new RabbitPublisher(connection, {
      confirmTimeoutMs: 5_000,
      observer: publisherObserver,
    });
    const deadLetters: DeadLetter[] = [];
    return {
      publisher,
      destination: `/${queue}`,
      source: queue,
      unroutableDestination: nowhere,
      async attach(acceptor, { consumer, observer }) {
        const attached = attachRabbitConsumer(acceptor, {
          connection,
          queue,
          consumer,
          retryBackoff,
          observer,
        });
        await attached.ready();
        return attached;
      },
      async publishRaw(message) {
        broker.channel.sendToQueue(queue, Buffer.from(message.body), {
          contentType: message.contentType ?? 'application/json',
          ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
          headers: { ...message.headers },
        });
      },
      async readDeadLetters() {
        for (const letter of await broker.drain(`${queue}.dlq`)) {
          const reason = letter.properties.headers?.[FERRY_HEADERS.rejectReason];
          deadLetters.push({
            messageId: letter.properties.messageId ?? null,
            reason: typeof reason === 'string' ? reason : null,
          });
        }
        return [...deadLetters];
      },
      async heldCount() {
        // Asked with no consumer attached: what was delivered and never acked is back in the queue.
        const { retryQueues } = workQueueNames({ queue, retryTiersMs });
        let held = 0;
        for (const name of [queue, ...retryQueues])
          held += (await broker.channel.checkQueue(name)).messageCount;
        return held;
      },
      async cleanup() {
        await publisher.close();
        await connection.close();
        await deleteWorkQueue(broker.channel, { queue, retryTiersMs });
        await broker.channel.deleteExchange(nowhere);
        await broker.close();
      },
    };
  },
});
