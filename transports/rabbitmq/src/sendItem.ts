import type { OutboxMessage, PublishOutcome } from '@ferry/core';

/** A message of a batch with its route and its place in the batch. */
export interface SendItem {
  readonly index: number;
  readonly message: OutboxMessage;
  readonly exchange: string;
  readonly routingKey: string;
}

/**
 * `items` with the smallest first, each key's messages kept in their order behind its first one
 * (a key's chain goes by its first message's size): a message too slow to upload delays every
 * publish after it on the connection, so it goes after the others, keyed or not (review 39: keyed
 * ones went first whatever their size, and a big keyed message held its neighbours again).
 */
export function smallestFirst(items: readonly SendItem[]): SendItem[] {
  const chains: SendItem[][] = [];
  const byKey = new Map<string, SendItem[]>();
  for (const item of items) {
    const key = item.message.orderingKey ?? null;
    const chain = key === null ? undefined : byKey.get(key);
    if (chain) chain.push(item);
    else {
      const started = [item];
      if (key !== null) byKey.set(key, started);
      chains.push(started);
    }
  }
  const size = (item: SendItem) => Buffer.byteLength(JSON.stringify(item.message.payload) ?? '');
  return chains
    .map((chain) => ({ chain, size: size(chain[0]!) }))
    .sort((a, b) => a.size - b.size)
    .flatMap(({ chain }) => chain);
}

/**
 * Of `again` (messages of `items` to publish again), those no earlier message of their key in
 * `items` keeps waiting: one neither sent nor published again (e.g. returned) goes first.
 */
export function unblocked(
  items: readonly SendItem[],
  again: readonly SendItem[],
  outcomes: ReadonlyMap<number, PublishOutcome>,
): SendItem[] {
  if (again.length === 0) return [];
  const retried = new Set(again);
  const waiting = new Set<string>();
  const ready: SendItem[] = [];
  for (const item of items) {
    const key = item.message.orderingKey ?? null;
    if (retried.has(item) && (key === null || !waiting.has(key))) ready.push(item);
    else if (key !== null && (retried.has(item) || outcomes.get(item.index)?.status !== 'sent'))
      waiting.add(key);
  }
  return ready;
}
