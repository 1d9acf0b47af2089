import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from '@ferry/core';

export function conformanceMessages(
  count: number,
  destination: string | null,
  overrides: Partial<OutboxMessage> = {},
): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    id: randomUUID(),
    type: 'conformance.event',
    payload: { index },
    destination,
    orderingKey: null,
    tenantId: 'conformance-tenant',
    correlationId: null,
    causationId: null,
    headers: {},
    traceparent: null,
    tracestate: null,
    attempt: 1,
    createdAt: new Date(),
    ...overrides,
  }));
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
