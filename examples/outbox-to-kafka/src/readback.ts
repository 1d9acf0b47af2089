import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { FERRY_HEADERS } from '@ferry/core';

/** Reads the topic with a consumer group of its own, as any downstream service would. */
export class TopicReader {
  /** Event ids (x-ferry-message-id) seen, and per customer (the Kafka key) order ids in arrival order. */
  readonly eventIds = new Set<string>();
  readonly ordersByCustomer = new Map<string, string[]>();
  deliveries = 0;
  private readonly consumer: Consumer;

  constructor(
    brokers: readonly string[],
    private readonly topic: string,
    groupId: string,
  ) {
    const kafka = new Kafka({
      clientId: 'outbox-to-kafka-reader',
      brokers: [...brokers],
      logLevel: logLevel.NOTHING,
    });
    this.consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message }) => {
        this.deliveries += 1;
        const id = message.headers?.[FERRY_HEADERS.messageId]?.toString();
        if (!id || this.eventIds.has(id)) return; // at least once: deduplicate on the event id
        this.eventIds.add(id);
        const customer = message.key?.toString() ?? '';
        const order = JSON.parse(message.value?.toString() ?? '{}') as { id: string };
        this.ordersByCustomer.set(customer, [...(this.ordersByCustomer.get(customer) ?? []), order.id]);
      },
    });
  }

  /** Customers whose events arrived out of the order they were placed in (order ids sort by placement). */
  outOfOrder(): number {
    return [...this.ordersByCustomer.values()].filter((ids) => ids.join() !== [...ids].sort().join()).length;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
