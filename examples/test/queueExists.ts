/** Whether a RabbitMQ queue exists: a passive declare on a channel of its own (a 404 closes the channel). */
import amqp from 'amqplib';

export const amqpUrl = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export async function queueExists(queue: string): Promise<boolean> {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    return await channel.checkQueue(queue).then(
      () => true,
      () => false,
    );
  } finally {
    await connection.close();
  }
}
