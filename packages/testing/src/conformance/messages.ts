import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from '@ferry/core';

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

export function conformanceMessages(
  count: number,
  destination: string | null,
  overrides: Partial<OutboxMessage> = {},
): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) =>
    outboxMessageFixture({ payload: { index }, destination, tenantId: 'conformance-tenant', ...overrides }),
  );
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
