import type { Consumer } from 'kafkajs';
import { deleteGroups, type KafkaConnection } from '@ferry/kafka';
import { uniqueName } from './env';

/**
 * A plain kafkajs consumer (its own group, reading `topic` from the beginning) that records
 * when each record arrived, by the `probe` field of its JSON value, and how often. Latency
 * scenarios open it before the clock starts and wait on `arrival(id)`.
 */
export class KafkaReader {
  private readonly arrivedAt = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();

  private constructor(
    private readonly connection: KafkaConnection,
    private readonly consumer: Consumer,
    private readonly groupId: string,
  ) {}

  /** Connects, subscribes and waits until the group assigned the topic's partitions. */
  static async open(connection: KafkaConnection, topic: string): Promise<KafkaReader> {
    const groupId = uniqueName('e2e-reader');
    const consumer = connection.kafka.consumer({ groupId });
    const reader = new KafkaReader(connection, consumer, groupId);
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => reader.record(message.value),
    });
    await withDeadline(joined, 60_000, 'the Kafka reader joining its group');
    return reader;
  }

  private record(value: Buffer | null): void {
    const at = performance.now();
    let probe: unknown;
    try {
      probe = (JSON.parse(value?.toString('utf8') ?? 'null') as { probe?: unknown } | null)?.probe;
    } catch {
      return;
    }
    if (typeof probe !== 'string') return;
    this.counts.set(probe, (this.counts.get(probe) ?? 0) + 1);
    if (this.arrivedAt.has(probe)) return;
    this.arrivedAt.set(probe, at);
    this.waiters.get(probe)?.(at);
    this.waiters.delete(probe);
  }

  /** When the record with `probe` first arrived (`performance.now()`); call it before publishing. */
  arrival(probe: string, deadlineMs = 30_000): Promise<number> {
    const known = this.arrivedAt.get(probe);
    if (known !== undefined) return Promise.resolve(known);
    const arrived = new Promise<number>((resolve) => this.waiters.set(probe, resolve));
    return withDeadline(arrived, deadlineMs, `record ${probe} on Kafka`);
  }

  /** How many records with `probe` arrived. */
  count(probe: string): number {
    return this.counts.get(probe) ?? 0;
  }

  async close(): Promise<void> {
    await this.consumer.disconnect();
    await deleteGroups(this.connection, [this.groupId]).catch(() => undefined);
  }
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: ${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
