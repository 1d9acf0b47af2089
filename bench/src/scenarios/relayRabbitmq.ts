import amqp from 'amqplib';
import { RabbitConnection, RabbitPublisher, encodeMessage } from '@ferry/rabbitmq';
import { SERVICES, uniqueName } from '../env';
import { relayScenario } from './relay';

/**
 * Outbox → RabbitMQ: RabbitPublisher vs a raw amqplib confirm channel publishing the same
 * messages (persistent, mandatory, the same properties) and awaiting waitForConfirms per batch.
 * Both publish to a durable queue through the default exchange.
 */
export const relayRabbitmq = relayScenario({
  name: 'relay-rabbitmq',
  baselineLabel: 'amqplib confirm channel, waitForConfirms per batch',
  subjectLabel: 'createRelay + RabbitPublisher',
  async openBroker() {
    const queue = uniqueName('relay');
    const raw = await amqp.connect(SERVICES.amqpUrl);
    const channel = await raw.createConfirmChannel();
    await channel.assertQueue(queue, { durable: true });
    const connection = new RabbitConnection({ url: SERVICES.amqpUrl, connectionName: 'ferry-bench' });
    const publisher = new RabbitPublisher({ connection });
    try {
      await publisher.connect();
    } catch (error) {
      await connection.close();
      await channel.deleteQueue(queue);
      await raw.close();
      throw error;
    }
    return {
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
      async close() {
        await publisher.close();
        await connection.close();
        await channel.deleteQueue(queue);
        await raw.close();
      },
    };
  },
});
