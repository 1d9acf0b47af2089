import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { FERRY_HEADERS } from '@ferry/core';

/** Reads the topic with its own consumer group, as any downstream service would. */
export class TopicReader {
  readonly firstSeen = new Map<string, number>();
  latenciesMs: number[] = [];
  deliveries = 0;
  private readonly consumer: Consumer;

  constructor(
    brokers: readonly string[],
    private readonly topic: string,
    groupId: string,
  ) {
    const kafka = new Kafka({
      clientId: 'ferry-demo-reader',
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
        if (!id || this.firstSeen.has(id)) return;
        const now = Date.now();
        this.firstSeen.set(id, now);
        const payload = JSON.parse(message.value?.toString() ?? '{}') as { offeredAt?: string };
        if (payload.offeredAt) this.latenciesMs.push(now - Date.parse(payload.offeredAt));
      },
    });
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
