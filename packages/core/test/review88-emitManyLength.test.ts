/**
 * Review 88 (outbox emitMany: how many events one call takes), failing on main.
 *
 * What I did: emitMany given an array claiming more events than any batch should hold, every index
 * a real event (a Proxy answering one event for any index, length 1e9; a plain array of 10,001), and
 * a Proxy whose length is no array length (-1, 1.5, '1', a getter that throws).
 *
 * What happened: emitMany had no bound on the number of events. It copied and validated event by
 * event whatever the length (1e9 events: the heap, or the caller's patience, ran out first), and a
 * length of 1.5 or '1' was answered with the events below it, inserted.
 *
 * What should happen: as acceptMany (review 87, INBOX_INPUT_LIMITS.maxBatchInputs), the length is
 * read once, before any event, through the same check (arrayLengthArgument): more than 10,000
 * events, or a length that is no array length, is a FerryValidationError on `events` naming it,
 * nothing read, nothing inserted.
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
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

const event = (n: number): OutboxEventInput => ({ type: 'order.created', payload: { n } });

/**
 * An array whose `length` answers `length` and every index an event, counting the indexes read.
 * Past 20,000 reads an index throws (so that a test on main ends instead of reading 1e9 indexes).
 */
function claiming(length: unknown): { events: OutboxEventInput[]; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy([] as OutboxEventInput[], {
    get(target, key, receiver) {
      if (key === 'length') {
        if (length instanceof Error) throw length;
        return length;
      }
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        reads += 1;
        if (reads > 20_000) throw new Error('read past 20,000 indexes');
        return event(Number(key));
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { events: proxy, reads: () => reads };
}

async function rows(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
  return row?.n ?? -1;
}

async function refusal(events: OutboxEventInput[]): Promise<FerryValidationError> {
  const error = await emitMany(t.db, events).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FerryValidationError);
  expect((error as FerryValidationError).field).toBe('events');
  return error as FerryValidationError;
}

describe('review88: emitMany refuses more events than a batch holds before reading one', () => {
  it('a length of 1e9, every index an event: refused on events naming length and limit, nothing read', async () => {
    const { events, reads } = claiming(1e9);
    expect((await refusal(events)).message).toMatch(/has 1000000000 events; the limit is 10000/);
    expect(reads()).toBe(0);
    expect(await rows()).toBe(0);
  });

  it('10,001 real events are refused, nothing read; 10,000 are inserted', async () => {
    const over = claiming(10_001);
    expect((await refusal(over.events)).message).toMatch(/has 10001 events; the limit is 10000/);
    expect(over.reads()).toBe(0);
    expect(await rows()).toBe(0);
    const { ids } = await emitMany(
      t.db,
      Array.from({ length: 10_000 }, (_, i) => event(i)),
    );
    expect(ids).toHaveLength(10_000);
    expect(await rows()).toBe(10_000);
  }, 60_000);

  it.each([[-1], [1.5], ['1'], [Number.NaN], [2 ** 53]])(
    'a length of %p is no array length: refused, nothing read or inserted',
    async (length) => {
      const { events, reads } = claiming(length);
      expect((await refusal(events)).message).toMatch(/length that is no array length/);
      expect(reads()).toBe(0);
      expect(await rows()).toBe(0);
    },
  );

  it('a length that throws is refused as it is (its length could not be read), nothing inserted', async () => {
    const { events, reads } = claiming(new Error('no length for you'));
    expect((await refusal(events)).message).toMatch(/length could not be read/);
    expect(reads()).toBe(0);
    expect(await rows()).toBe(0);
  });
});
