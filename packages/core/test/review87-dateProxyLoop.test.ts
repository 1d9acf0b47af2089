/**
 * Review 87 (emit's payload walk: what a Date's toJSON returns), failing on main.
 *
 * What I did: a payload value that is a Proxy whose getPrototypeOf trap answers Date.prototype and
 * Object.prototype in turn, and whose toJSON returns the Proxy itself. (The test's trap throws
 * after 10,000 answers, so that the walk on main ends; without that bound it never does.)
 *
 * What happened: the walk (validate/json.ts) sees a Date, calls toJSON, checks that the result is
 * not a Date (the trap now says it is not), and walks the result in the Date's place, at the same
 * depth: there the trap says Date again. The walk never ends: emit() spins synchronously for ever,
 * the application's event loop with it, no error, no timeout (measured: a 20 s kill).
 *
 * What should happen: what a Date's toJSON returns is walked once, never read as a Date again,
 * however its prototype answers: refused (`toJSON returns a Date`) naming the path, at once.
 */
import { emit, FerryValidationError, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a Proxy that is a Date every other time it is asked is refused at once, naming its path', async () => {
  let asked = 0;
  const shifty: object = new Proxy(
    {},
    {
      getPrototypeOf() {
        asked += 1;
        if (asked > 10_000) throw new Error('asked 10,000 times');
        return asked % 2 === 1 ? Date.prototype : Object.prototype;
      },
      get(_, key) {
        return key === 'toJSON' ? () => shifty : undefined;
      },
    },
  );
  const event = { type: 'order.created', payload: { at: shifty } } as unknown as OutboxEventInput;
  const error = await emit(t.db, event).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FerryValidationError);
  // On main: the walk asked 10,000 times, then refused the trap's throw ('could not be read').
  expect({
    field: (error as FerryValidationError).field,
    reason: (error as FerryValidationError).reason,
  }).toEqual({
    field: 'payload.at',
    reason: 'toJSON returns a Date',
  });
  expect(asked).toBeLessThan(10);
});
