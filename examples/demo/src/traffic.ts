import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { FERRY_HEADERS } from '@ferry/core';
import type { DemoConfig } from './config';
import type { PlacedOrder } from './traces';
import { traceparentOf } from './tracing';

export interface OfferedTraffic {
  readonly offered: number;
  readonly valid: number;
  readonly duplicates: number;
  readonly invalid: number;
  /** Each valid order and the trace its checkout span started. */
  readonly orders: readonly PlacedOrder[];
}

interface Delivery {
  readonly body: Buffer;
  readonly options: amqp.Options.Publish;
}

/**
 * One order, placed inside a span of the checkout service that sends it: the delivery carries
 * that span's `traceparent`, so everything ferry does with the order joins one trace.
 */
function order(config: DemoConfig, index: number, tracer: Tracer): Delivery & PlacedOrder {
  const id = randomUUID();
  const span = tracer.startSpan('place order', {
    kind: SpanKind.PRODUCER,
    attributes: { 'messaging.system': 'rabbitmq', 'messaging.message.id': id },
  });
  span.end();
  const payload = {
    orderId: id,
    customerId: `customer-${index % config.customers}`,
    amountCents: 100 + ((index * 37) % 9_900),
    offeredAt: new Date().toISOString(),
  };
  return {
    orderId: id,
    traceId: span.spanContext().traceId,
    body: Buffer.from(JSON.stringify(payload)),
    options: {
      messageId: id,
      contentType: 'application/json',
      persistent: true,
      headers: { [FERRY_HEADERS.tenantId]: config.tenant, [FERRY_HEADERS.traceparent]: traceparentOf(span) },
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
export async function offerTraffic(
  config: DemoConfig,
  queue: string,
  tracer: Tracer,
): Promise<OfferedTraffic> {
  const connection = await amqp.connect(config.amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    const orders = Array.from({ length: config.orders }, (_, i) => order(config, i, tracer));
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
      orders: orders.map(({ orderId, traceId }) => ({ orderId, traceId })),
    };
  } finally {
    await connection.close();
  }
}
