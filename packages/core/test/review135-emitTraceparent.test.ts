/**
 * Review 135 (a hostile application's emit), failing on main: emit checked an explicit
 * `traceparent` against the shape of W3C Trace Context only (two hex digits, 32, 16, two), so
 * version `ff` (which W3C forbids) and an all-zero trace id or parent id (W3C: invalid) were
 * stored and relayed as the message's `traceparent`, where every W3C reader drops them (ferry's
 * own consumers and handler scope, its relay's publish span, OpenTelemetry's propagator): the
 * application's trace was silently cut at the outbox (with tracing on, the relay's publish span
 * started a new trace, the event's tracestate attached to it). review 106 did the same for the
 * tracestate. What should happen: refused as any traceparent that is not W3C trace context,
 * FerryValidationError naming `traceparent`, nothing inserted; and a row SQL wrote with one is
 * published by the relay without it (review138-traceContextUpgrade: as a row an earlier emit
 * wrote; FAILed, a committed event was lost at the upgrade).
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

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const UNUSABLE = [
  ['version ff', `ff-${TRACE}-${SPAN}-01`],
  ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
  ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
];

const count = async (): Promise<string | undefined> =>
  (await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox_events'))[0]?.n;

describe('review135: a traceparent no W3C reader takes', () => {
  it.each(UNUSABLE)('with %s is refused naming traceparent, nothing inserted', async (_what, traceparent) => {
    const before = await count();
    const error = await emit(t.db, { type: 'traced', payload: {}, traceparent }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryValidationError);
    expect(error).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'traceparent' });
    expect(await count()).toBe(before);
  });

  it('a valid one of another version is still stored as given', async () => {
    const traceparent = `01-${TRACE}-${SPAN}-00`;
    const { id } = await emit(t.db, { type: 'traced', payload: {}, traceparent });
    const rows = await t.db.query<{ traceparent: string }>(
      'SELECT traceparent FROM outbox_events WHERE id = $1',
      [id],
    );
    expect(rows[0]?.traceparent).toBe(traceparent);
  });
});
