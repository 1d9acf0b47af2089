import type { OutboxMessage, PublishOutcome } from '../contracts';
import { inexactNumberFault, jsonbNumberFault } from '../validate/jsonNumbers';
import { isPlainObject, kindOf } from '../validate/json';
import { ENVELOPE_LIMIT_BOUNDS } from './envelope/types';
import { envelopeFault } from './envelope/validate';

/** Claimed messages whose payload text holds a number JSON.parse changed (inexactNumberFault). */
const inexactPayloads = new WeakMap<OutboxMessage, string>();

/**
 * `message` read from `payloadText` (the column as PostgreSQL wrote it): notes a number in it that
 * JSON.parse changed, for foreignRowFault. emit() refuses such numbers; a row inserted by SQL
 * holds them as jsonb keeps them (numeric, exact). jsonb writes every number in full (1e21 as 22
 * digits), so an integer is judged by whether JSON.parse kept it (jsonbNumberFault), not by how
 * many digits it has: an event emit() wrote is never refused for it.
 */
export function noteInexactPayload<M extends OutboxMessage>(message: M, payloadText: unknown): M {
  const fault = typeof payloadText === 'string' ? inexactNumberFault(payloadText, jsonbNumberFault) : null;
  if (fault !== null) inexactPayloads.set(message, fault);
  return message;
}

/**
 * Why a claimed row cannot be published, or null. emit() writes only a JSON object as payload and
 * an object of strings as headers, but the table's jsonb columns take any JSON, so a row inserted
 * by SQL (another service, a migration, a hand-written fix) may hold anything. Such a row is
 * refused alone: a publisher given it would throw for the whole batch (kafkajs on a header value
 * that is a number) or send what no consumer of ferry's wire format can read.
 *
 * Every other column is held to emit's own checks (envelopeFault) at the widest limits an
 * emitter may be given (ENVELOPE_LIMIT_BOUNDS, so no row an emitter configured with larger
 * limits wrote is refused): a type of only spaces, an empty or overlong destination, ordering
 * key, tenant or correlation / causation id, a tenant a ferry consumer refuses, a traceparent
 * that is not W3C trace context, a reserved header name (`x-ferry-*`, `traceparent`,
 * `tracestate`), an empty header name, too many or too large headers, a payload too deep or
 * too large. The reason names the field as emit does (`tenantId: must not be only whitespace`).
 */
export function foreignRowFault(message: OutboxMessage): string | null {
  const payload: unknown = message.payload;
  if (!isPlainObject(payload)) return `payload is ${kindOf(payload)}, not a JSON object`;
  const inexact = inexactPayloads.get(message);
  if (inexact !== undefined) return `payload: ${inexact}`;
  const headers: unknown = message.headers;
  if (!isPlainObject(headers)) return `headers is ${kindOf(headers)}, not a JSON object of strings`;
  const fault = envelopeFault(message, ENVELOPE_LIMIT_BOUNDS);
  return fault === null ? null : `${fault.field}: ${fault.reason}`;
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
