import amqp, { type ConfirmChannel } from 'amqplib';
import { RabbitConnection, RabbitPublisher, encodeMessage } from '@ferry/rabbitmq';
import { SERVICES, uniqueName } from '../env';
import { relayScenario, type RelayBroker } from './relay';

/** RabbitMQ as the relay scenarios see it, plus the raw confirm channel and its queue. */
export interface RabbitBroker extends RelayBroker {
  readonly queue: string;
  /** A raw amqplib confirm channel on its own connection (the baselines publish on it). */
  readonly channel: ConfirmChannel;
  /** Messages ready in the queue (both sides publish into it and nothing consumes). */
  depth(): Promise<number>;
}

/**
 * A fresh durable queue (through the default exchange), ferry's RabbitPublisher built with its
 * own constructor, and a raw amqplib confirm channel beside it. The queue is purged before every
 * run and deleted on close.
 */
export async function openRabbitBroker(): Promise<RabbitBroker> {
  const queue = uniqueName('relay');
  const raw = await amqp.connect(SERVICES.amqpUrl);
  const channel = await raw.createConfirmChannel();
  await channel.assertQueue(queue, { durable: true });
  const connection = new RabbitConnection({ url: SERVICES.amqpUrl, connectionName: 'ferry-bench' });
  const publisher = new RabbitPublisher(connection);
  try {
    await publisher.connect();
  } catch (error) {
    await connection.close();
    await channel.deleteQueue(queue);
    await raw.close();
    throw error;
  }
  return {
    queue,
    channel,
    destination: `/${queue}`,
    publisher,
    prepare(batch) {
      const encoded = batch.map((message) => encodeMessage(message));
      return async () => {
        for (const { content, options } of encoded) channel.publish('', queue, content, options);
        await channel.waitForConfirms();
      };
    },
    async reset() {
      await channel.purgeQueue(queue);
    },
    async depth() {
      return (await channel.checkQueue(queue)).messageCount;
    },
    async close() {
      await publisher.close();
      await connection.close();
      await channel.deleteQueue(queue);
      await raw.close();
    },
  };
}

/**
 * Outbox → RabbitMQ: RabbitPublisher vs a raw amqplib confirm channel publishing the same
 * messages (persistent, mandatory, the same properties) and awaiting waitForConfirms per batch.
 * Both publish to a durable queue through the default exchange.
 */
export const relayRabbitmq = relayScenario({
  name: 'relay-rabbitmq',
  baselineLabel: 'amqplib confirm channel, waitForConfirms per batch',
  subjectLabel: 'createRelay + RabbitPublisher',
  openBroker: openRabbitBroker,
});
