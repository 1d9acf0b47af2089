/**
 * Review 156 (failed first): a consumer runs for months. attachInMemoryConsumer joined its
 * closing signal with each batch's own through `AbortSignal.any`; Node 20 keeps every signal
 * combined with a source in that source until the source aborts, so the consumer's closing
 * signal gathered one entry per batch for as long as the consumer lived (review 99 fixed the
 * same in the transports). What should happen: what any signal holds of the batches is the same
 * after N deliveries and after 2N (core's clearableAny, let go when the batch ends).
 */
import { afterEach, expect, jest, test } from '@jest/globals';
import { FERRY_HEADERS } from '@ferry/core';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';

afterEach(() => {
  jest.restoreAllMocks();
});

const N = 500;

/** How many times the signal combined most often was combined (AbortSignal.any) so far. */
function combinedMost(combines: Map<AbortSignal, number>): number {
  return Math.max(0, ...combines.values());
}

test('a consumer keeps no entry per batch in a signal that outlives the batch (same after N and 2N)', async () => {
  const combines = new Map<AbortSignal, number>();
  const combine = AbortSignal.any.bind(AbortSignal);
  jest.spyOn(AbortSignal, 'any').mockImplementation((given) => {
    for (const signal of given) combines.set(signal, (combines.get(signal) ?? 0) + 1);
    return combine(given);
  });
  const broker = new InMemoryBroker();
  broker.declareQueue('q');
  const acceptor = new MemoryAcceptor();
  const consumer = attachInMemoryConsumer(acceptor, { broker, queue: 'q', consumer: 'c', maxBatchSize: 1 });
  const deliver = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i += 1) {
      broker.send('q', { body: Buffer.from('{}'), headers: { [FERRY_HEADERS.messageId]: `m-${i}` } });
    }
    await waitUntil(`${to} deliveries accepted`, () => acceptor.accepted.length === to);
  };
  try {
    await deliver(0, N);
    const afterN = combinedMost(combines);
    await deliver(N, 2 * N);
    expect(combinedMost(combines)).toBe(afterN);
  } finally {
    await consumer.close();
  }
});
