import type { OutboxMessage, Publisher } from '@ferry/core';
import { expect } from './jest';
import { waitUntil } from './assertions';
import { neverAborted } from './messages';

/**
 * Publishes `messages` until the publisher reported each `sent`, publishing again the ones it
 * reported `retryable` or `unavailable`, as the relay does (a broker may refuse the first writes
 * to a topic created a moment ago: Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER). A `permanent` outcome
 * fails at once; the outcomes of each call must name the messages given, in order.
 */
export async function publishUntilSent(
  publisher: Publisher,
  messages: readonly OutboxMessage[],
  timeoutMs: number,
): Promise<void> {
  let pending = [...messages];
  await waitUntil(
    `${messages.length} messages reported sent`,
    async () => {
      const outcomes = await publisher.publish(pending, neverAborted());
      expect(outcomes.map((o) => o.id)).toEqual(pending.map((m) => m.id));
      expect(outcomes.filter((o) => o.status === 'permanent')).toEqual([]);
      const notSent = new Set(outcomes.filter((o) => o.status !== 'sent').map((o) => o.id));
      pending = pending.filter((m) => notSent.has(m.id));
      return pending.length === 0 ? true : undefined;
    },
    timeoutMs,
  );
}
