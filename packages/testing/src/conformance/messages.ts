import { randomUUID } from 'node:crypto';
import { FERRY_HEADERS, type OutboxMessage } from '@ferry/core';

/** One OutboxMessage as the relay hands it to a publisher: every optional field null; `overrides` win. */
export function outboxMessageFixture(overrides: Partial<OutboxMessage> = {}): OutboxMessage {
  return {
    id: randomUUID(),
    type: 'conformance.event',
    payload: {},
    destination: null,
    orderingKey: null,
    tenantId: null,
    correlationId: null,
    causationId: null,
    headers: {},
    traceparent: null,
    tracestate: null,
    attempt: 1,
    createdAt: new Date(),
    ...overrides,
  };
}

/**
 * The tenants the suite's messages take in turn: two tenants and none, so a batch mixes them and a
 * consumer that resolves one tenant per batch (or loses it) accepts some under the wrong one.
 */
export const CONFORMANCE_TENANTS: readonly (string | null)[] = [
  'conformance-tenant',
  'conformance-other-tenant',
  null,
];

/**
 * Non-ASCII text every suite payload and the raw bodies the suite checks carry, to arrive exactly:
 * accents, €, CJK, an astral emoji (a UTF-16 surrogate pair) and a combining character (A +
 * U+030A, not the precomposed Å). A transport that encodes or decodes the body as latin1 (or
 * normalizes it) changes it.
 */
export const NON_ASCII_TEXT = 'Zoë Brontë · 12,50 € · 注文 · 🚚 · A\u030a';

/** The application's own header each suite message carries (besides ferry's). */
export const EVENT_HEADER = 'x-conformance-index';

/**
 * The headers the first case expects on every accepted input, as the inbox reads them: the
 * event's own header, and ferry's correlation, causation and trace context (correlation and
 * tracing through the inbox read them from the stored headers).
 */
export const CARRIED_HEADERS: readonly string[] = [
  EVENT_HEADER,
  FERRY_HEADERS.correlationId,
  FERRY_HEADERS.causationId,
  FERRY_HEADERS.traceparent,
  FERRY_HEADERS.tracestate,
];

/** What `message` carries under header `name` (CARRIED_HEADERS). */
export function expectedHeader(message: OutboxMessage, name: string): string | null | undefined {
  if (name === EVENT_HEADER) return message.headers[EVENT_HEADER];
  if (name === FERRY_HEADERS.correlationId) return message.correlationId;
  if (name === FERRY_HEADERS.causationId) return message.causationId;
  if (name === FERRY_HEADERS.traceparent) return message.traceparent;
  return message.tracestate;
}

/**
 * `count` messages as the relay hands them over: each with its payload (with NON_ASCII_TEXT), a tenant of
 * CONFORMANCE_TENANTS in turn, its type, an event header, and a correlation id, causation id and
 * W3C trace context of its own.
 */
export function conformanceMessages(
  count: number,
  destination: string | null,
  overrides: Partial<OutboxMessage> = {},
): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) => {
    const id = overrides.id ?? randomUUID();
    const trace = id.replace(/-/g, '');
    return outboxMessageFixture({
      id,
      type: `conformance.event.${index % 2 === 0 ? 'even' : 'odd'}`,
      payload: { index, text: NON_ASCII_TEXT },
      destination,
      tenantId: CONFORMANCE_TENANTS[index % CONFORMANCE_TENANTS.length]!,
      headers: { [EVENT_HEADER]: String(index) },
      correlationId: `conformance-correlation-${index}`,
      causationId: `conformance-cause-${index}`,
      traceparent: `00-${trace}-${trace.slice(0, 16)}-01`,
      tracestate: 'conformance=1',
      ...overrides,
    });
  });
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
