import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import { settlesWithin } from '@ferry/core/transport';
import { deleteWorkQueue } from '@ferry/rabbitmq';

/** How long closing the connection of a probe that could not open may take. */
const CLOSE_MS = 10_000;

/** Looks at the demo queue's dead-letter queue and removes the demo's topology at the end. */
export class QueueProbe {
  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: Channel,
    private readonly queue: string,
  ) {}

  /** A channel that cannot be created closes the connection (within 10 s) and rejects with its failure. */
  static async open(url: string, queue: string): Promise<QueueProbe> {
    const connection = await amqp.connect(url);
    try {
      return new QueueProbe(connection, await connection.createChannel(), queue);
    } catch (error) {
      await settlesWithin(
        connection.close().catch(() => undefined),
        CLOSE_MS,
      );
      throw error;
    }
  }

  async deadLettered(): Promise<number> {
    return (await this.channel.checkQueue(`${this.queue}.dlq`)).messageCount;
  }

  /** Reads (and removes) the dead-lettered copies, counting them by ferry's reject reason header. */
  async deadLetterReasons(): Promise<Record<string, number>> {
    const reasons: Record<string, number> = {};
    for (;;) {
      const message = await this.channel.get(`${this.queue}.dlq`, { noAck: true });
      if (message === false) return reasons;
      const reason = String(message.properties.headers?.[FERRY_HEADERS.rejectReason] ?? 'unknown');
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
  }

  /** The work queue, its dead-letter exchange and queue, and the retry tier queues of the default backoff. */
  async removeTopology(): Promise<void> {
    try {
      await deleteWorkQueue(this.channel, { queue: this.queue });
    } finally {
      await this.connection.close(); // also when the removal failed
    }
  }
}
