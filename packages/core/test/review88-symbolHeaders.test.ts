/**
 * Review 88 (headers whose keys are symbols), failing on main.
 *
 * What I did: emit an event, and accept a message into the inbox, with headers holding a
 * symbol-keyed entry beside a string one (`{ [Symbol('trace')]: 'abc', source: 'web' }`), as a
 * payload may (where a symbol key is refused: `symbol keys are not JSON`).
 *
 * What happened: both copy the headers with Object.entries, which leaves symbol keys out: the
 * header was dropped without a word, the rest stored (the payload refuses the same thing with a
 * typed error).
 *
 * What should happen: as the payload, a typed refusal naming the field: emit a
 * FerryValidationError on `headers`, acceptance an `invalid` result (FERRY_VALIDATION_FAILED,
 * reason on headers); nothing stored. The same rule for both (validate/headers.ts).
 */
import { emit, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const withSymbol = (): Record<string, string> =>
  ({ [Symbol('trace')]: 'abc', source: 'web' }) as unknown as Record<string, string>;

it('emit refuses headers with a symbol key on headers, nothing inserted', async () => {
  const error = await emit(t.db, { type: 'order.created', payload: {}, headers: withSymbol() }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FerryValidationError);
  expect(error).toMatchObject({ field: 'headers', message: expect.stringMatching(/symbol/) });
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
  expect(row?.n).toBe(0);
});

it('emit refuses a non-enumerable symbol key too (the payload does)', async () => {
  const headers: Record<string, string> = { source: 'web' };
  Object.defineProperty(headers, Symbol('hidden'), { value: 'x', enumerable: false });
  const error = await emit(t.db, { type: 'order.created', payload: {}, headers }).catch((e: unknown) => e);
  expect(error).toMatchObject({ field: 'headers', message: expect.stringMatching(/symbol/) });
});

it('acceptance answers headers with a symbol key invalid, nothing stored', async () => {
  const inbox = makeInbox(t.prisma);
  const [result] = await inbox.acceptMany([message({ headers: withSymbol() })]);
  expect(result).toMatchObject({
    kind: 'invalid',
    code: 'FERRY_VALIDATION_FAILED',
    reason: expect.stringMatching(/^headers .*symbol/),
  });
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
  expect(row?.n).toBe(0);
});
