/**
 * Review 87 (outbox emitMany: the length of a sparse array), failing on main.
 *
 * What I did: emitMany with an array whose length is far beyond its elements: `events[n] = event`
 * for a large n (an index computed wrong), `new Array(count)` with a count gone wrong. Seen through
 * a Proxy that counts the indexes read.
 *
 * What happened: before any check, emitMany copies every index of the array (review 82's fix for
 * holes: `Array.from({ length })`), hole by hole, and only then refuses the first hole. With
 * length 1,000,000 it reads 1,000,000 indexes to refuse index 0; with length 2^32-1 (one element
 * at the last index) the copy exhausts the heap and the process dies (V8 "heap out of memory"), the
 * application with it: no error to catch.
 *
 * What should happen: the first index that is not an event is refused (as a hole is: `event must
 * be an object`) without reading the indexes after it, whatever the length; nothing inserted.
 */
import { emitMany, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const event: OutboxEventInput = { type: 'order.created', payload: { orderId: 1 } };

/** `events`, counting the indexes read. */
function counted(events: OutboxEventInput[]): { events: OutboxEventInput[]; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(events, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { events: proxy, reads: () => reads };
}

describe('review87: emitMany of a sparse array with a large length', () => {
  // Review 88: a length above 10,000 (emitMany's bound) is refused before any index is read
  // (review88-emitManyLength); below it, the first hole still ends the reading.
  it('a hole at index 1 of 10,000 is refused after reading indexes 0 and 1', async () => {
    const sparse: OutboxEventInput[] = [];
    sparse[0] = event;
    sparse[9_999] = event;
    const { events, reads } = counted(sparse);
    const error = await emitMany(t.db, events).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryValidationError);
    expect((error as FerryValidationError).field).toBe('event');
    // Before review 87: 10,000 (every index copied before the hole was refused).
    expect(reads()).toBe(2);
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
    expect(row?.n).toBe(0);
  });

  it('one event at index 2^32-2 (length 2^32-1) is refused (review 88: on its length), the process alive', async () => {
    const sparse: OutboxEventInput[] = [];
    sparse[2 ** 32 - 2] = event;
    const error = await emitMany(t.db, sparse).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryValidationError);
  });
});
