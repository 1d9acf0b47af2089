import type { Kafka, Producer } from 'kafkajs';
import type { KafkajsGate } from './kafkajsGate';
import type { DriverProducer, DriverProducerOptions, TopicRecords } from './types';

/**
 * An idempotent kafkajs producer behind ferry's client interface. A connect that failed leaves
 * its kafkajs producer behind and the next connect starts a new one: kafkajs would retry the
 * old one's seed broker on its own timers first, where a new one takes the gate's next broker
 * and tries it once (KafkajsGate).
 */
export class KafkajsProducer implements DriverProducer {
  private producer: Producer;
  private readonly disconnectListeners: (() => void)[] = [];

  constructor(
    private readonly kafka: Kafka,
    private readonly gate: KafkajsGate,
    private readonly options: DriverProducerOptions,
  ) {
    this.producer = this.create();
  }

  private create(): Producer {
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // No retry of a send once the producer is released (KafkajsGate.retries).
      retry: { retries: this.gate.retries(this.options.retries) },
    });
    for (const listener of this.disconnectListeners) producer.on(producer.events.DISCONNECT, listener);
    return producer;
  }

  async connect(): Promise<void> {
    const producer = this.producer;
    try {
      await this.gate.connecting(() => producer.connect());
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      if (this.producer === producer && !this.options.signal.aborted) this.producer = this.create();
      throw error;
    }
  }

  disconnect(): Promise<void> {
    return this.gate.disconnect(this.producer);
  }

  destroy(): Promise<void> {
    return this.gate.release(new Error('the producer is closing'));
  }

  onDisconnect(listener: () => void): void {
    this.disconnectListeners.push(listener);
    this.producer.on(this.producer.events.DISCONNECT, listener);
  }

  async send(batches: readonly TopicRecords[]): Promise<void> {
    const topicMessages = batches.map(({ topic, records }) => ({
      topic,
      messages: records.map(({ key, value, headers }) => ({ key, value, headers })),
    }));
    await this.producer.sendBatch({ acks: -1, topicMessages });
  }
}
