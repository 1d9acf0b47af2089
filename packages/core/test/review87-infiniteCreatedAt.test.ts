/**
 * Review 87 (outbox: a row whose created_at SQL set to 'infinity' or '-infinity' fails the
 * statements that read it with its neighbours), failing on main.
 *
 * What I did: PostgreSQL's timestamptz takes 'infinity' and '-infinity', and the table's CHECKs
 * leave created_at free; an operator parks a row that way (or an import writes it). An ordinary
 * event is emitted beside it; the relay runs one cycle, the admin lists, gets and counts.
 *
 * Also finite ones no JavaScript Date argument can name: year 20,000, the last microsecond PostgreSQL
 * stores (294276 AD), 4713 BC.
 *
 * What happened: the completion computes each row's age (`now() - e.created_at`), which
 * PostgreSQL refuses for an infinite timestamp ("cannot subtract infinite timestamps", 22008): the
 * whole completion statement fails (a non-retriable FERRY_VALIDATION_FAILED from runOnce), the
 * neighbour was published but stays PROCESSING, and is published again at every cycle. The admin's
 * stats and health fail for the whole outbox the same way (the oldest PENDING age), and get / list
 * fail "cannot convert infinity to bigint" (the listing cursor's microseconds), so one row hides
 * every other row of its page. A finite created_at past what a bigint of microseconds since 1970
 * holds fails get and list the same way ("bigint out of range"); one outside the years 1 to 9999
 * ends a page with a cursor list() itself then refuses ("is not a cursor returned by list()"):
 * the rows after it cannot be listed.
 *
 * What should happen: like the counters (rowValuesBatch.test.ts), a value a row can hold never
 * fails the statement of its neighbours: both rows are SENT, stats count them, get answers the
 * row, and list pages through every row exactly once.
 */
import { createOutboxAdmin, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { relay } from './outbox/helpers';

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

/** An event whose created_at is then set to `createdAt` by SQL, and an ordinary one after it. */
async function oddAndNeighbour(createdAt: string): Promise<{ odd: string; neighbour: string }> {
  const { id: odd } = await emit(t.db, { type: 'odd', payload: {} });
  await t.db.execute(`UPDATE outbox_events SET created_at = $2::timestamptz WHERE id = $1::uuid`, [
    odd,
    createdAt,
  ]);
  const { id: neighbour } = await emit(t.db, { type: 'neighbour', payload: {} });
  return { odd, neighbour };
}

/** created_at values a row can hold, each with whether it lists before (newer than) now. */
const ODD_CREATED_AT: Array<[string, boolean]> = [
  ['infinity', true],
  ['-infinity', false],
  // Finite, beyond the years 1 to 9999 a cursor took, and beyond a bigint of microseconds.
  ['20000-01-01 00:00:00+00', true],
  ['294276-12-31 23:59:59.999999+00', true],
  ['4713-01-01 00:00:00+00 BC', false],
];

describe.each(ODD_CREATED_AT)('a row whose created_at is %s', (createdAt, newer) => {
  it('is completed with its neighbour in one cycle: both SENT, each published once', async () => {
    const { odd, neighbour } = await oddAndNeighbour(createdAt);
    const publisher = new InMemoryPublisher({ decide: () => 'sent' });
    const r = relay(t.db, publisher);
    try {
      expect(await r.runOnce()).toMatchObject({ claimed: 2, sent: 2, lost: 0 });
    } finally {
      await r.close();
    }
    expect(publisher.attempts.map((m) => m.id)).toEqual([odd, neighbour]);
    const rows = await t.db.query(`SELECT event_type AS type, status FROM outbox_events ORDER BY seq`);
    expect(rows).toEqual([
      { type: 'odd', status: 'SENT' },
      { type: 'neighbour', status: 'SENT' },
    ]);
  });

  it('the admin counts, gets and lists it with its neighbours', async () => {
    const { odd } = await oddAndNeighbour(createdAt);
    const { id: third } = await emit(t.db, { type: 'third', payload: {} });
    const admin = createOutboxAdmin(t.db);
    const stats = await admin.stats();
    expect(stats.pending).toBe(3);
    expect(typeof stats.oldestPendingAgeMs).toBe('number');
    expect((await admin.health()).stats.pending).toBe(3);
    expect((await admin.get(odd))?.type).toBe('odd');
    // One row per page: every row once, the odd one where created_at puts it.
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const listed = await admin.list({ limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...listed.items.map((item) => item.type));
      if (listed.nextCursor === null) break;
      cursor = listed.nextCursor;
    }
    expect(seen).toEqual(newer ? ['odd', 'third', 'neighbour'] : ['third', 'neighbour', 'odd']);
    expect(third).toBeDefined();
  });
});
