import type { OutboxMessage } from '@ferry/core';
import { outboxMessageFixture } from '../packages/testing/src/conformance/messages';

/**
 * An OutboxMessage as the relay hands it to a publisher, for the transport tests: a fresh id,
 * type `order.placed`, every optional field null, first attempt; `overrides` win.
 */
export function testOutboxMessage(overrides: Partial<OutboxMessage> = {}): OutboxMessage {
  return outboxMessageFixture({ type: 'order.placed', payload: { n: 1 }, ...overrides });
}
