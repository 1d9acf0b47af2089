/**
 * The test's own view of the services the quick-start programs use: what they wrote to the
 * database, what they published to Kafka, and messages sent to them through RabbitMQ and SQS.
 */
import { DeleteQueueCommand, GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { oneStatement } from '../test-support/oneStatement';

export const amqpUrl = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const kafkaBrokers = (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
export const sqsEndpoint = 'http://127.0.0.1:9324';

export interface Receipt {
  consumer: string;
  message_id: string;
  message_type: string | null;
  status: string;
  tenant_id: string | null;
}

/** The inbox receipts of one consumer (and message id) in the application's database. */
export async function receipts(
  databaseUrl: string,
  consumer: string,
  messageId?: string,
): Promise<Receipt[]> {
  return rowsOf<Receipt>(
    databaseUrl,
    `SELECT consumer, message_id, message_type, status, tenant_id FROM ferry_inbox_receipts
      WHERE consumer = $1 AND ($2::text IS NULL OR message_id = $2) ORDER BY created_at`,
    [consumer, messageId ?? null],
  );
}

/** The rows of one query on the application's database, on a connection of its own. */
export async function rowsOf<T extends object>(
  databaseUrl: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  return oneStatement<T>(databaseUrl, text, values);
}

export interface KafkaRecord {
  key: string | null;
  headers: Record<string, string>;
  payload: unknown;
}

/** Collects every record of `topic` from its beginning into `records` until stopped. */
export async function collectTopic(
  topic: string,
  groupId: string,
  records: KafkaRecord[],
): Promise<Consumer> {
  const consumer = new Kafka({ brokers: kafkaBrokers, logLevel: logLevel.NOTHING }).consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers = Object.fromEntries(
        Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
      );
      records.push({
        key: message.key?.toString() ?? null,
        headers,
        payload: JSON.parse(message.value?.toString() ?? 'null'),
      });
    },
  });
  return consumer;
}

/** Creates `topic` (one partition) unless it exists, so that a watch can subscribe before the program publishes. */
export async function createTopic(topic: string): Promise<void> {
  const admin = new Kafka({ brokers: kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

export async function deleteKafka(topics: string[], groups: string[]): Promise<void> {
  const admin = new Kafka({ brokers: kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.deleteTopics({ topics }).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}

/** Publishes one message to `exchange` with `routingKey` (and waits for the broker's confirm). */
export async function publishRabbit(
  exchange: string,
  routingKey: string,
  body: unknown,
  options: { messageId: string; times: number },
): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    for (let i = 0; i < options.times; i += 1) {
      channel.publish(exchange, routingKey, Buffer.from(JSON.stringify(body)), {
        messageId: options.messageId,
        contentType: 'application/json',
      });
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

/** Deletes queues and exchanges that may not exist (each on its own channel: a miss closes one). */
export async function deleteRabbit(queues: string[], exchanges: string[]): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    for (const queue of queues) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue).then(
        () => channel.close(),
        () => undefined,
      );
    }
    for (const exchange of exchanges) {
      const channel = await connection.createChannel();
      await channel.deleteExchange(exchange).then(
        () => channel.close(),
        () => undefined,
      );
    }
  } finally {
    await connection.close();
  }
}

function sqsClient(): SQSClient {
  return new SQSClient({
    endpoint: sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
}

/** Sends one message with ferry's message-id attribute to the queue named `queue`. */
export async function sendSqs(queue: string, body: unknown, messageId: string): Promise<void> {
  const client = sqsClient();
  try {
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: queue }));
    await client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: JSON.stringify(body),
        MessageAttributes: { 'x-ferry-message-id': { DataType: 'String', StringValue: messageId } },
      }),
    );
  } finally {
    client.destroy();
  }
}

export async function deleteSqs(queues: string[]): Promise<void> {
  const client = sqsClient();
  try {
    for (const queue of queues) {
      const found = await client.send(new GetQueueUrlCommand({ QueueName: queue })).catch(() => undefined);
      if (found?.QueueUrl) await client.send(new DeleteQueueCommand({ QueueUrl: found.QueueUrl }));
    }
  } finally {
    client.destroy();
  }
}
