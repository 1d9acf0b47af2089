import type { Options } from 'amqplib';
import type { OutboxMessage } from '@ferry/core';
import { outboxHeaders } from '@ferry/core/transport';
import { shortString } from './copyOptions';
import type { Route } from './publisherOptions';

type PublishOptions = Options.Publish;

/**
 * Where an event goes: its `destination` (`exchange` or `exchange/routingKey`; the routing key
 * defaults to the type), else the route for its type, else the default destination (written
 * the same way). Null: no route.
 */
export function resolveRoute(
  message: Pick<OutboxMessage, 'type' | 'destination'>,
  routes: Readonly<Record<string, Route>> = {},
  defaultDestination?: string,
): { exchange: string; routingKey: string } | null {
  if (message.destination !== null && message.destination.length > 0) {
    return parseDestination(message.destination, message.type);
  }
  const route = Object.prototype.hasOwnProperty.call(routes, message.type) ? routes[message.type] : undefined;
  if (route) return { exchange: route.exchange, routingKey: route.routingKey ?? message.type };
  if (defaultDestination !== undefined) return parseDestination(defaultDestination, message.type);
  return null;
}

export function parseDestination(
  destination: string,
  type: string,
): { exchange: string; routingKey: string } {
  const slash = destination.indexOf('/');
  if (slash < 0) return { exchange: destination, routingKey: type };
  return { exchange: destination.slice(0, slash), routingKey: destination.slice(slash + 1) };
}

/**
 * Why an exchange or routing key cannot be published (an AMQP short string holds at most 255
 * bytes, and amqplib throws on a longer one), or null.
 */
export function overlongRoute(route: { exchange: string; routingKey: string }): string | null {
  for (const [what, value] of [
    ['exchange', route.exchange],
    ['routing key', route.routingKey],
  ] as const) {
    const bytes = Buffer.byteLength(value);
    if (bytes > 255) return `the ${what} is ${bytes} bytes; AMQP allows 255 bytes`;
  }
  return null;
}

/**
 * The wire format: JSON body, ferry headers (over the event's own), AMQP properties. `type` and
 * `correlationId` are AMQP short strings (255 bytes at most); a longer one (emit allows 255
 * characters of type and 512 of ids) is left out of the properties: the ferry headers carry it.
 */
export function encodeMessage(
  message: OutboxMessage,
  appId?: string,
): { content: Buffer; options: PublishOptions } {
  return {
    content: Buffer.from(JSON.stringify(message.payload), 'utf8'),
    options: publishOptions(message, appId),
  };
}

/**
 * The AMQP timestamp property of a message created at `createdAt`: whole seconds since 1970, an
 * unsigned 64-bit count, so none for a time before 1970 (a historical import, a created_at of
 * '-infinity' read as the earliest Date) or an Invalid Date: amqplib refuses such a value as it
 * encodes the publish, and the message could never be sent (test/review88-time.test.ts).
 */
function amqpTimestamp(createdAt: Date): { timestamp?: number } {
  const seconds = Math.floor(createdAt.getTime() / 1000);
  return seconds >= 0 ? { timestamp: seconds } : {};
}

/** The AMQP properties and headers of encodeMessage, without its body. */
export function publishOptions(message: OutboxMessage, appId: string | undefined): PublishOptions {
  const correlationId = shortString(message.correlationId ?? undefined);
  return {
    persistent: true,
    mandatory: true,
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    messageId: message.id,
    ...(shortString(message.type) !== undefined ? { type: message.type } : {}),
    ...amqpTimestamp(message.createdAt),
    headers: outboxHeaders(message),
    ...(correlationId !== undefined ? { correlationId } : {}),
    ...(appId !== undefined ? { appId } : {}),
  };
}
