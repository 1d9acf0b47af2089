import { randomUUID } from 'node:crypto';
import type { OutboxMessage } from '@ferry/core';
import { testOutboxMessage } from '../../../../test-support/outboxMessages';

/** A message with every optional field set, so the wire format is exercised in full. */
export function outboxMessage(overrides: Partial<OutboxMessage> = {}): OutboxMessage {
  return testOutboxMessage({
    payload: { orderId: randomUUID(), total: 42 },
    tenantId: 'tenant-a',
    correlationId: randomUUID(),
    causationId: randomUUID(),
    headers: { 'x-app': 'shop' },
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'congo=t61rcWkgMzE',
    ...overrides,
  });
}

export function outboxMessages(count: number, overrides: Partial<OutboxMessage> = {}): OutboxMessage[] {
  return Array.from({ length: count }, () => outboxMessage(overrides));
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
