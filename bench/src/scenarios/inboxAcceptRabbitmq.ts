import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import {
  DEFAULTS as RABBIT_DEFAULTS,
  RabbitConnection,
  attachRabbitConsumer,
  declareWorkQueue,
  deleteWorkQueue,
} from '@ferry/rabbitmq';
import { SERVICES, benchDatabase, uniqueName } from '../env';
import { CONSUMER, TENANT, countRows, countingAcceptor, openInbox } from '../inbox';
import { payload } from '../outbox';
import { timed, type Scenario } from '../runner';

/** The consumer's default, on both sides (ferry's consumer runs with its default options). */
const PREFETCH = RABBIT_DEFAULTS.prefetch;

/**
 * Inbox acceptance from RabbitMQ. Before each run (not timed) `n` messages are published to a
 * work queue. Subject: attachRabbitConsumer into a real Inbox until all `n` are accepted, then
 * close (which lets the last batch be acked). Baseline: a raw amqplib consumer with the same
 * prefetch (the consumer's default) that parses each body as JSON and acks it. Both include
 * opening and closing the channel.
 */
export const inboxAcceptRabbitmq: Scenario = {
  name: 'inbox-accept-rabbitmq',
  unit: 'msgs/s',
  better: 'higher',
  baselineLabel: `amqplib consume + ack, prefetch ${PREFETCH}`,
  subjectLabel: `attachRabbitConsumer + Inbox, prefetch ${PREFETCH}`,
  targets: [{ on: 'ratio', bound: 0.6 }], // issue 13: acceptance at least 0.6 of a raw consume + ack
  async open() {
    const database = await benchDatabase();
    const queue = uniqueName('accept');
    const raw = await amqp.connect(SERVICES.amqpUrl);
    const admin = await raw.createConfirmChannel();
    await declareWorkQueue(admin, { queue });
    const connection = new RabbitConnection({ url: SERVICES.amqpUrl, connectionName: 'ferry-bench' });
    const inbox = await openInbox(database.prisma);

    const preload = async (n: number) => {
      await admin.purgeQueue(queue);
      for (let i = 0; i < n; i += 1) {
        admin.sendToQueue(queue, Buffer.from(JSON.stringify(payload(i))), {
          persistent: true,
          contentType: 'application/json',
          messageId: randomUUID(),
          headers: { [FERRY_HEADERS.tenantId]: TENANT, [FERRY_HEADERS.eventType]: 'bench.order.placed' },
        });
      }
      await admin.waitForConfirms();
    };
    const queueEmpty = async () => {
      const state = await admin.checkQueue(queue);
      return state.messageCount === 0;
    };

    return {
      async baseline(n) {
        await preload(n);
        const sample = await timed(async () => {
          const channel = await raw.createChannel();
          await channel.prefetch(PREFETCH);
          let acked = 0;
          await new Promise<void>((resolve, reject) => {
            channel
              .consume(queue, (message) => {
                if (message === null) return;
                JSON.parse(message.content.toString('utf8'));
                channel.ack(message);
                acked += 1;
                if (acked >= n) resolve();
              })
              .catch(reject);
          });
          await channel.close();
          return { ops: acked, verified: acked === n };
        });
        return { ...sample, verified: sample.verified && (await queueEmpty()) };
      },
      async subject(n) {
        await database.prisma.$executeRawUnsafe('TRUNCATE ferry_inbox_receipts');
        await preload(n);
        const sample = await timed(async () => {
          const counting = countingAcceptor(inbox, n);
          const consumer = attachRabbitConsumer(counting.acceptor, {
            connection,
            queue,
            consumer: CONSUMER,
            declareTopology: false,
          });
          await counting.done;
          await consumer.close();
          return { ops: n, verified: true };
        });
        const accepted = await countRows(database.prisma, 'ferry_inbox_receipts');
        return { ...sample, verified: accepted === n && (await queueEmpty()) };
      },
      async close() {
        await inbox.close();
        await connection.close();
        await deleteWorkQueue(admin, { queue });
        await raw.close();
        await database.drop();
      },
    };
  },
};
