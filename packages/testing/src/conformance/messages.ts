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

/**
 * The tenants the suite's messages take in turn: two tenants and none, so a batch mixes them and a
 * consumer that resolves one tenant per batch (or loses it) accepts some under the wrong one.
 */
export const CONFORMANCE_TENANTS: readonly (string | null)[] = [
  'conformance-tenant',
  'conformance-other-tenant',
  null,
];

export function conformanceMessages(
  count: number,
  destination: string | null,
  overrides: Partial<OutboxMessage> = {},
): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) =>
    outboxMessageFixture({
      payload: { index },
      destination,
      tenantId: CONFORMANCE_TENANTS[index % CONFORMANCE_TENANTS.length]!,
      ...overrides,
    }),
  );
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
