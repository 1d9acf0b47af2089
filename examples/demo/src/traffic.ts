import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import type { DemoConfig } from './config';

export interface OfferedTraffic {
  readonly offered: number;
  readonly valid: number;
  readonly duplicates: number;
  readonly invalid: number;
}

interface Delivery {
  readonly body: Buffer;
  readonly options: amqp.Options.Publish;
}

function order(config: DemoConfig, index: number): Delivery {
  const id = randomUUID();
  const payload = {
    orderId: id,
    customerId: `customer-${index % config.customers}`,
    amountCents: 100 + ((index * 37) % 9_900),
    offeredAt: new Date().toISOString(),
  };
  return {
    body: Buffer.from(JSON.stringify(payload)),
    options: {
      messageId: id,
      contentType: 'application/json',
      persistent: true,
      headers: { [FERRY_HEADERS.tenantId]: config.tenant },
    },
  };
}

/** Three kinds of deliveries ferry must refuse before acceptance: they go to the DLQ. */
function invalid(config: DemoConfig, index: number): Delivery {
  const headers = { [FERRY_HEADERS.tenantId]: config.tenant };
  switch (index % 3) {
    case 0: // no identity: no ferry header, no AMQP messageId
      return {
        body: Buffer.from('{"orderId":"anonymous"}'),
        options: { contentType: 'application/json', headers },
      };
    case 1: // not JSON
      return {
        body: Buffer.from('<order id="1"/>'),
        options: { messageId: randomUUID(), contentType: 'application/json', headers },
      };
    default: // over the inbox payload limit
      return {
        body: Buffer.from(JSON.stringify({ orderId: randomUUID(), padding: 'x'.repeat(64 * 1024) })),
        options: { messageId: randomUUID(), contentType: 'application/json', headers },
      };
  }
}

/** Publishes the burst (valid orders, deliberate duplicates of some, invalid ones) with confirms. */
export async function offerTraffic(config: DemoConfig, queue: string): Promise<OfferedTraffic> {
  const connection = await amqp.connect(config.amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    const orders = Array.from({ length: config.orders }, (_, i) => order(config, i));
    const burst: Delivery[] = [...orders];
    for (let i = 0; i < config.duplicates; i += 1) burst.push(orders[(i * 7) % orders.length] as Delivery);
    for (let i = 0; i < config.invalid; i += 1) burst.push(invalid(config, i));
    for (const delivery of burst) channel.sendToQueue(queue, delivery.body, delivery.options);
    await channel.waitForConfirms();
    await channel.close();
    return {
      offered: burst.length,
      valid: config.orders,
      duplicates: config.duplicates,
      invalid: config.invalid,
    };
  } finally {
    await connection.close();
  }
}
