import { createRelay, fromPrisma, Inbox, type InboxHandlerContext } from '@ferry/core';
import { attachSqsConsumer, declareQueue, deleteQueue, SqsConnection, SqsPublisher } from '@ferry/sqs';
import type { PrismaClient } from '../generated/prisma/client';
import type { ExampleConfig } from './config';

type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface RoundTrip {
  readonly connection: SqsConnection;
  readonly queueUrl: string;
  readonly counts: { duplicates: number };
  close(): Promise<void>;
}

/**
 * Both ends of the queue. Producing side: the outbox relay publishing to SQS. Consuming side: an
 * SQS consumer feeding the inbox, whose handler records a shipment. (Two services in real life;
 * one database here to keep the example small.)
 */
export async function startRoundTrip(config: ExampleConfig, prisma: PrismaClient): Promise<RoundTrip> {
  const connection = new SqsConnection({
    endpoint: config.sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, // ElasticMQ accepts any
  });
  await connection.connect();
  const queue = await declareQueue(connection, { name: config.queue, deadLetter: { maxReceiveCount: 5 } });
  const deadLetterQueueUrl = queue.deadLetterQueueUrl;
  if (deadLetterQueueUrl === null)
    throw new Error(`declareQueue made no dead-letter queue for ${config.queue}`);

  const publisher = new SqsPublisher(connection, { defaultDestination: queue.queueUrl });
  const relay = createRelay({
    db: fromPrisma(prisma),
    publisher,
    listenUrl: config.databaseUrl,
    options: { pollInterval: 500 },
  });
  relay.start();

  const counts = { duplicates: 0 };
  const inbox = new Inbox<Tx>(prisma, {
    worker: { enabled: true, pollIntervalMs: 100 },
    observer: (event) => {
      if (event.type === 'duplicate') counts.duplicates += 1;
    },
    handlers: {
      shipping: async (payload, context: InboxHandlerContext<Tx>) => {
        const order = payload as { orderId: string };
        await context.tx.shipment.create({ data: { orderId: order.orderId, eventId: context.messageId } });
      },
    },
  });
  await inbox.initialize();
  const consumer = attachSqsConsumer(inbox, {
    connection,
    queueUrl: queue.queueUrl,
    consumer: 'shipping',
    waitTimeSeconds: 1, // short long-poll: close() returns quickly
    deadLetter: { mode: 'queue', queueUrl: deadLetterQueueUrl },
  });
  await consumer.ready();

  return {
    connection,
    queueUrl: queue.queueUrl,
    counts,
    async close() {
      await consumer.close(); // stop receiving; the batch in acceptance is finished and deleted
      await inbox.close();
      await relay.close();
      await deleteQueue(connection, queue.queueUrl);
      await deleteQueue(connection, deadLetterQueueUrl);
      await connection.close();
    },
  };
}
