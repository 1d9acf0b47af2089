import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { FERRY_HEADERS } from '@ferry/core';

/** Reads the topic with its own consumer group, as any downstream service would. */
export class TopicReader {
  readonly firstSeen = new Map<string, number>();
  latenciesMs: number[] = [];
  deliveries = 0;
  readonly byPartition = new Map<number, number>();
  readonly events: string[] = [];
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
    const { CRASH, GROUP_JOIN, REBALANCING, STOP } = this.consumer.events;
    this.consumer.on(CRASH, (e) => this.events.push(`crash: ${String(e.payload.error)}`));
    this.consumer.on(GROUP_JOIN, (e) =>
      this.events.push(`join: ${JSON.stringify(e.payload.memberAssignment)}`),
    );
    this.consumer.on(REBALANCING, () => this.events.push('rebalancing'));
    this.consumer.on(STOP, () => this.events.push('stop'));
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        this.deliveries += 1;
        this.byPartition.set(partition, (this.byPartition.get(partition) ?? 0) + 1);
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
