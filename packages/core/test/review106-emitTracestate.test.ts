/**
 * Review 106 (from the last note's list), failing on main: emit checked an explicit `traceparent`
 * against W3C Trace Context ("traceparent: not W3C trace context") but stored any `tracestate` text
 * of up to 512 characters: `vendor=caf\u00e9` (not ASCII), `Vendor=1` (an upper-case key), `a b=1`,
 * `=1` or 33 list members were written to the outbox and relayed as the `tracestate` header, where
 * every W3C reader (ferry's own consumers, OpenTelemetry's propagator) drops it: the application
 * learns nothing, its vendor state is silently lost downstream. What should happen: refused as the
 * traceparent is, FerryValidationError naming `tracestate`, nothing inserted; every tracestate W3C
 * allows (empty members, spaces around members, multi-tenant keys, 32 members) still stored as given.
 */
import { emit, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

async function emitted(tracestate: string): Promise<unknown> {
  return emit(t.db, { type: 'traced', payload: {}, traceparent: TRACEPARENT, tracestate }).then(
    async ({ id }) => {
      const rows = await t.db.query<{ tracestate: string | null }>(
        'SELECT tracestate FROM outbox_events WHERE id = $1',
        [id],
      );
      return { stored: rows[0]?.tracestate };
    },
    (e: unknown) => ({ refused: e instanceof FerryValidationError ? e.field : String(e) }),
  );
}

const members = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',');

describe('review106: a tracestate emit is given', () => {
  it.each([['vendor=caf\u00e9'], ['Vendor=1'], ['a b=1'], ['=1'], ['novalue'], ['v=a=b'], [members(33)]])(
    '%s is refused naming tracestate, nothing inserted',
    async (tracestate) => {
      const before = await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox_events');
      expect(await emitted(tracestate)).toEqual({ refused: 'tracestate' });
      const after = await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox_events');
      expect(after[0]?.n).toBe(before[0]?.n);
    },
  );

  it.each([
    ['rojo=00f067aa0ba902b7'],
    ['congo=t61rcWkgMzE, rojo=00f067aa0ba902b7'],
    ['a,,b=1 '.replace('a,', 'a=1,')],
    ['tenant@vendor=x'],
    [members(32)],
  ])('%s is stored as given', async (tracestate) => {
    expect(await emitted(tracestate)).toEqual({ stored: tracestate });
  });
});
