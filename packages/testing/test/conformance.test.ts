/**
 * The transport conformance suite run against the in-memory broker of @ferry/testing, so the
 * broker that applications' tests use behaves as RabbitMQ, Kafka and SQS do. Each case gets a
 * fresh broker; restartBroker ends the current broker's session.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer } from '@ferry/testing';
import { runTransportConformance } from '@ferry/testing/conformance';

let current: InMemoryBroker | null = null;

runTransportConformance({
  name: 'in-memory',
  transport: 'memory',
  system: 'memory',
  features: {
    deadLetter: true,
    orderingPerKey: true,
    redeliveryAfterRestart: true,
    unroutableDetection: true,
  },
  restartBroker: async () => current?.restart(),
  timeoutMs: 10_000,
  async createTransport({ publisherObserver }) {
    const broker = new InMemoryBroker();
    current = broker;
    const queue = 'conformance';
    broker.declareQueue(queue);
    const publisher = broker.publisher({ observer: publisherObserver });
    return {
      publisher,
      destination: queue,
      source: queue,
      unroutableDestination: 'nowhere',
      async attach(acceptor, { consumer, observer }) {
        const attached = attachInMemoryConsumer(acceptor, {
          broker,
          queue,
          consumer,
          observer,
          retryBackoff: { initialMs: 20, maxMs: 100 },
        });
        await attached.ready();
        return attached;
      },
      async publishRaw(message) {
        broker.send(queue, {
          body: Buffer.from(message.body),
          ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
          headers: { ...message.headers },
        });
      },
      async readDeadLetters() {
        return broker.deadLetters(queue).map(({ delivery, reason }) => ({
          messageId: delivery.headers[FERRY_HEADERS.messageId] ?? delivery.messageId ?? null,
          reason,
        }));
      },
      async cleanup() {
        await publisher.close();
        broker.deleteQueue(queue);
      },
    };
  },
});
