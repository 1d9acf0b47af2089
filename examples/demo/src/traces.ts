import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** An order as the checkout service placed it: its id (the delivery's message id) and trace. */
export interface PlacedOrder {
  readonly orderId: string;
  readonly traceId: string;
}

/** What the demo found of one order's trace. */
export interface OrderTrace {
  readonly orderId: string;
  readonly traceId: string;
  /** The steps of the path not found in the order's trace; empty when the whole path is in it. */
  readonly missing: readonly string[];
}

export interface TraceNames {
  /** The inbox consumer fed by RabbitMQ. */
  readonly orders: string;
  /** The inbox consumer fed by Kafka. */
  readonly downstream: string;
  /** The Kafka topic the relay publishes to. */
  readonly topic: string;
}

/** The path every order takes, in order: each step's name in the report. */
export const ORDER_PATH = [
  'RabbitMQ accept',
  'handler',
  'outbox emit',
  'Kafka publish',
  'Kafka accept',
  'downstream handler',
] as const;

const MESSAGE_ID = 'messaging.message.id';
const SYSTEM = 'messaging.system';

function text(span: ReadableSpan, attribute: string): string | undefined {
  const value = span.attributes[attribute];
  return typeof value === 'string' ? value : undefined;
}

/**
 * For each order, whether ferry's spans of its whole path sit in the trace its checkout span
 * started: the RabbitMQ delivery's `accept` (and any duplicate's), the handler's `process`, the
 * `ferry emit` inside it, the relay's `publish` to Kafka, and the Kafka consumer's `accept` and
 * `process` of the emitted event. A span of the path in another trace counts as missing.
 */
export function orderTraces(
  spans: readonly ReadableSpan[],
  orders: readonly PlacedOrder[],
  names: TraceNames,
): OrderTrace[] {
  const byMessage = new Map<string, ReadableSpan[]>();
  const emitsByParent = new Map<string, ReadableSpan[]>();
  const add = (index: Map<string, ReadableSpan[]>, key: string, span: ReadableSpan) =>
    index.set(key, [...(index.get(key) ?? []), span]);
  for (const span of spans) {
    const messageId = text(span, MESSAGE_ID);
    if (messageId !== undefined) add(byMessage, `${span.name}\n${messageId}`, span);
    const parent = span.parentSpanContext?.spanId;
    if (span.name === 'ferry emit' && parent !== undefined) add(emitsByParent, parent, span);
  }
  const find = (name: string, messageId: string | undefined) =>
    messageId === undefined ? [] : (byMessage.get(`${name}\n${messageId}`) ?? []);

  return orders.map(({ orderId, traceId }) => {
    const inTrace = (found: readonly ReadableSpan[], system?: string) =>
      found.length > 0 &&
      found.every(
        (s) => s.spanContext().traceId === traceId && (system === undefined || text(s, SYSTEM) === system),
      );
    const handled = find(`process ${names.orders}`, orderId);
    const emitted = handled.flatMap((s) => emitsByParent.get(s.spanContext().spanId) ?? []);
    const eventId = emitted.length > 0 ? text(emitted[emitted.length - 1]!, MESSAGE_ID) : undefined;
    const found: Record<(typeof ORDER_PATH)[number], boolean> = {
      'RabbitMQ accept': inTrace(find(`accept ${names.orders}`, orderId), 'rabbitmq'),
      handler: inTrace(handled, 'rabbitmq'),
      'outbox emit': inTrace(emitted),
      'Kafka publish': inTrace(find(`publish ${names.topic}`, eventId), 'kafka'),
      'Kafka accept': inTrace(find(`accept ${names.downstream}`, eventId), 'kafka'),
      'downstream handler': inTrace(find(`process ${names.downstream}`, eventId), 'kafka'),
    };
    return { orderId, traceId, missing: ORDER_PATH.filter((step) => !found[step]) };
  });
}
