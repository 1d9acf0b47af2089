import type { OutboxMessage, PublishOutcome } from '../contracts';
import { isPlainObject, kindOf } from '../validate/json';
import { headerShapeFault, headerShapeReason } from '../validate/headers';
import { inexactPayloadOf, noteInexactNumbers } from '../validate/storedJson';
import { ENVELOPE_LIMIT_BOUNDS } from './envelope/types';
import { envelopeFault, usableTraceparent, usableTracestate } from './envelope/validate';

/** Claimed messages whose payload text shows that none of emit's payload checks can fail. */
const plainPayloads = new WeakSet<OutboxMessage>();

/**
 * Whether jsonb's text of a payload (none of whose numbers may be inexact: mayHoldInexactNumber
 * false) shows that none of emit's payload checks (jsonFault, serializedTextFault, the size) can
 * fail, so the relay need not walk every payload it claims. Each test only ever sends a payload
 * to the full check: the text is no larger than maxPayloadBytes (JSON.stringify of what
 * JSON.parse read is never longer than jsonb's text, which writes every number in full and a
 * space after each `:` and `,`); it holds no more `{` and `[` than maxPayloadDepth (each
 * container opens with one). Text faults cannot occur: jsonb holds neither NUL nor an unpaired
 * surrogate.
 */
function plainPayloadText(text: string): boolean {
  const { maxPayloadBytes, maxPayloadDepth } = ENVELOPE_LIMIT_BOUNDS;
  if (text.length * 3 > maxPayloadBytes && Buffer.byteLength(text) > maxPayloadBytes) return false;
  let openers = 0;
  for (const opener of ['{', '[']) {
    for (let at = text.indexOf(opener); at >= 0; at = text.indexOf(opener, at + 1)) {
      if (++openers > maxPayloadDepth) return false;
    }
  }
  return true;
}

/**
 * `message` read from `payloadText` (the column as PostgreSQL wrote it): notes a number in it that
 * JSON.parse changed (noteInexactNumbers), and whether the text shows that emit's payload checks
 * cannot fail (plainPayloadText), for foreignRowFault. One MAYBE_INEXACT pass serves both.
 */
export function notePayloadText(message: OutboxMessage, payloadText: unknown): OutboxMessage {
  const mayBeInexact = noteInexactNumbers(message, payloadText);
  if (typeof payloadText === 'string' && !mayBeInexact && plainPayloadText(payloadText))
    plainPayloads.add(message);
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
 * key, tenant or correlation / causation id, a tenant a ferry consumer refuses, a reserved header name (`x-ferry-*`, `traceparent`,
 * `tracestate`), an empty header name, too many or too large headers, a payload too deep or
 * too large. The reason names the field as emit does (`tenantId: must not be only whitespace`).
 * Trace context no W3C reader takes is not a fault: the row is published without it (publishedTrace).
 */
export function foreignRowFault(message: OutboxMessage): string | null {
  const payload: unknown = message.payload;
  if (!isPlainObject(payload)) return `payload is ${kindOf(payload)}, not a JSON object`;
  const inexact = inexactPayloadOf(message);
  if (inexact !== null) return `payload: ${inexact}`;
  const shape = headerShapeFault(message.headers);
  if (shape !== null) return headerShapeReason(shape);
  const fault = envelopeFault(publishedTrace(message), ENVELOPE_LIMIT_BOUNDS, !plainPayloads.has(message));
  return fault === null ? null : `${fault.field}: ${fault.reason}`;
}

/**
 * `message` without the trace context no W3C reader takes (a traceparent emit refuses, and its
 * tracestate with it, which W3C readers do not read without one; a tracestate emit refuses), as if
 * it had none; `message` itself when there is none. Not a fault of the row: an earlier release's
 * emit stored such trace context (version `ff` and all-zero ids before review 135, any tracestate
 * text before review 106), and FAILing those rows at the upgrade lost committed events, a requeue
 * FAILing them again, for trace context every reader drops (review 138).
 */
function publishedTrace(message: OutboxMessage): OutboxMessage {
  const { traceparent, tracestate } = message;
  const parent = traceparent === null || usableTraceparent(traceparent) ? traceparent : null;
  const state =
    tracestate === null || (parent === traceparent && usableTracestate(tracestate)) ? tracestate : null;
  return parent === traceparent && state === tracestate
    ? message
    : { ...message, traceparent: parent, tracestate: state };
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
    if (fault === null) publishable.push(publishedTrace(message));
    else
      refused.push({
        id: message.id,
        status: 'permanent',
        error: `not a valid outbox event: ${fault} (a row emit() would not write)`,
      });
  }
  return { publishable, refused };
}
