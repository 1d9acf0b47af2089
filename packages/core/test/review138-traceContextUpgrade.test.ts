/**
 * Review 138 (hostile review of review 135's traceparent rule), failing on main: the relay held
 * claimed rows to emit's new traceparent rule (version `ff` and all-zero ids refused), so a row
 * the previous release's emit wrote with such a traceparent (it took the shape alone), still
 * PENDING at the upgrade, was FAILED as "a row emit() would not write", and a requeue FAILED it
 * again: the application's committed event was never published, for a trace context every W3C
 * reader drops anyway. The same for a tracestate emit took before review 106. What should
 * happen: the event is published without the trace context no reader takes (as if it had none),
 * whoever wrote it; the rest of the row is held to emit's rules as before.
 */
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { drainAll, relay } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

/** Inserts a row as an earlier release's emit wrote it. */
async function stored(traceparent: string | null, tracestate: string | null): Promise<string> {
  const [row] = await t.db.query<{ id: string }>(
    `INSERT INTO outbox_events (id, event_type, payload, traceparent, tracestate, max_retries)
     VALUES (gen_random_uuid(), 'earlier', '{"n":1}', $1, $2, 5) RETURNING id::text`,
    [traceparent, tracestate],
  );
  return row!.id;
}

describe('review138: trace context an earlier emit stored, which no W3C reader takes', () => {
  it('is left out of the publish; the event is published, not FAILED', async () => {
    await t.db.execute(`DELETE FROM outbox_events`);
    const rows = [
      [`ff-${TRACE}-${SPAN}-01`, 'vendor=1', null, null],
      [`00-${'0'.repeat(32)}-${SPAN}-01`, 'vendor=1', null, null],
      [`00-${TRACE}-${'0'.repeat(16)}-01`, null, null, null],
      [`00-${TRACE}-${SPAN}-01`, 'Vendor=café', `00-${TRACE}-${SPAN}-01`, null],
      [`00-${TRACE}-${SPAN}-01`, 'vendor=1', `00-${TRACE}-${SPAN}-01`, 'vendor=1'],
      // What no emit ever stored is not published either, and the event is.
      ['not-a-trace', 'vendor=1', null, null],
      [null, 't'.repeat(513), null, null],
    ] as const;
    const ids: string[] = [];
    for (const [traceparent, tracestate] of rows) ids.push(await stored(traceparent, tracestate));
    const publisher = new InMemoryPublisher();
    const r = relay(t.db, publisher);
    await drainAll(r, t.db);
    await r.close();
    const statuses = await t.db.query<{ id: string; status: string; last_error: string | null }>(
      `SELECT id::text, status, last_error FROM outbox_events ORDER BY seq`,
    );
    expect(statuses).toEqual(ids.map((id) => ({ id, status: 'SENT', last_error: null })));
    const byId = new Map(publisher.delivered.map((m) => [m.id, m]));
    rows.forEach(([, , traceparent, tracestate], at) => {
      expect(byId.get(ids[at]!)).toMatchObject({ traceparent, tracestate, payload: { n: 1 } });
    });
  });

  it('a row with another fault is still FAILED naming it', async () => {
    await t.db.execute(`DELETE FROM outbox_events`);
    const [row] = await t.db.query<{ id: string }>(
      `INSERT INTO outbox_events (id, event_type, payload, traceparent, max_retries)
       VALUES (gen_random_uuid(), '   ', '{}', $1, 5) RETURNING id::text`,
      [`ff-${TRACE}-${SPAN}-01`],
    );
    const publisher = new InMemoryPublisher();
    const r = relay(t.db, publisher);
    await drainAll(r, t.db);
    await r.close();
    expect(publisher.delivered).toEqual([]);
    const [failed] = await t.db.query<{ status: string; last_error: string }>(
      `SELECT status, last_error FROM outbox_events WHERE id = $1::uuid`,
      [row!.id],
    );
    expect(failed).toEqual({ status: 'FAILED', last_error: expect.stringContaining('type:') });
  });
});
