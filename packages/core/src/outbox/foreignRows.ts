import type { OutboxMessage, PublishOutcome } from '../contracts';
import { inexactPayloadOf } from '../validate/storedJson';
import { isPlainObject, kindOf } from '../validate/json';

/**
 * Why a claimed row cannot be published, or null. emit() writes only a JSON object as payload and
 * an object of strings as headers, but the table's jsonb columns take any JSON, so a row inserted
 * by SQL (another service, a migration, a hand-written fix) may hold anything. Such a row is
 * refused alone: a publisher given it would throw for the whole batch (kafkajs on a header value
 * that is a number) or send what no consumer of ferry's wire format can read.
 */
export function foreignRowFault(message: OutboxMessage): string | null {
  const payload: unknown = message.payload;
  if (!isPlainObject(payload)) return `payload is ${kindOf(payload)}, not a JSON object`;
  const inexact = inexactPayloadOf(message);
  if (inexact !== null) return `payload: ${inexact}`;
  const headers: unknown = message.headers;
  if (!isPlainObject(headers)) return `headers is ${kindOf(headers)}, not a JSON object of strings`;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string')
      return `headers: ${JSON.stringify(name)} is ${kindOf(value)}, not a string`;
  }
  return null;
}

/**
 * Splits a claimed batch: the rows that can be published, and a `permanent` outcome (FAILED at
 * once, no retry) for each that cannot (foreignRowFault), so none of them reaches the publisher.
 */
export function refuseForeignRows(messages: readonly OutboxMessage[]): {
  publishable: OutboxMessage[];
  refused: PublishOutcome[];
} {
  const publishable: OutboxMessage[] = [];
  const refused: PublishOutcome[] = [];
  for (const message of messages) {
    const fault = foreignRowFault(message);
    if (fault === null) publishable.push(message);
    else
      refused.push({
        id: message.id,
        status: 'permanent',
        error: `not a valid outbox event: ${fault} (a row emit() would not write)`,
      });
  }
  return { publishable, refused };
}
