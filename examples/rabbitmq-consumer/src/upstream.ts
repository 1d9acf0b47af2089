import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import { deleteWorkQueue } from '@ferry/rabbitmq';
import type { ExampleConfig } from './config';
import type { OrderMessage } from './orders';

export interface Traffic {
  readonly orders: number;
  /** How many of the orders are refunds (negative amounts). */
  readonly refunds: number;
  /** Deliveries published twice, as a producer retrying after a lost confirm would. */
  readonly duplicates: number;
}

/** Another service publishing orders to our queue, with confirms. */
export async function publishOrders(config: ExampleConfig, traffic: Traffic): Promise<number> {
  const connection = await amqp.connect(config.amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    const orders: OrderMessage[] = Array.from({ length: traffic.orders }, (_, i) => ({
      orderId: randomUUID(),
      amountCents: i < traffic.refunds ? -(500 + i) : 1_000 + i,
    }));
    const burst = [...orders, ...orders.slice(0, traffic.duplicates)];
    for (const order of burst) {
      channel.sendToQueue(config.queue, Buffer.from(JSON.stringify(order)), {
        messageId: order.orderId, // the inbox's identity: the same order twice is one receipt
        contentType: 'application/json',
        persistent: true,
        headers: { [FERRY_HEADERS.tenantId]: config.tenant },
      });
    }
    await channel.waitForConfirms();
    await channel.close();
    return burst.length;
  } finally {
    await connection.close();
  }
}

/** Removes the queue and the retry / dead-letter topology the consumer declared. */
export async function removeQueue(config: ExampleConfig): Promise<void> {
  const connection = await amqp.connect(config.amqpUrl);
  try {
    await deleteWorkQueue(await connection.createChannel(), { queue: config.queue });
  } finally {
    await connection.close();
  }
}
