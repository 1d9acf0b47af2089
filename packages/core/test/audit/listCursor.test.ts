// Review finding (failed first), the class of the inbox's cross-scope list cursor: the audit
// log's cursor was the bare id of the last entry, taken by a listing with other filters (it then
// skipped that listing's newer entries), and a page ending exactly at `limit` entries answered a
// cursor to an empty page.
import { randomUUID } from 'node:crypto';
import { createAuditLog, createOutboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** `count` audited actions by `actor` (retries of missing ids: audited, changing nothing). */
async function audit(actor: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await createOutboxAdmin(t.db).retry(randomUUID(), { actor, reason: 'cursor test' });
  }
}

describe('audit list cursors', () => {
  it('refuses a cursor reused with other filters, and ends without one on an exactly full page', async () => {
    const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    await audit(a, 2);
    await audit(b, 1);
    await audit(a, 2);
    const log = createAuditLog(t.db);
    const first = await log.list({ actor: a, limit: 2 });
    expect(first.nextCursor).not.toBeNull();
    await expect(log.list({ actor: b, cursor: first.nextCursor! })).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'cursor',
    });
    await expect(log.list({ cursor: first.nextCursor! })).rejects.toMatchObject({ field: 'cursor' });
    const second = await log.list({ actor: a, limit: 2, cursor: first.nextCursor! });
    expect({ actors: second.items.map((e) => e.actor), next: second.nextCursor }).toEqual({
      actors: [a, a],
      next: null,
    });
  });

  it("Review finding (failed first): pages with the first page's since, however the caller recomputes it", async () => {
    const actor = `since-${randomUUID()}`;
    const start = new Date(Date.now() - 60_000);
    await audit(actor, 3);
    const log = createAuditLog(t.db);
    const first = await log.list({ actor, since: start, limit: 1 });
    // A later since (an age recomputed later, or one past every entry) continues the listing
    // with the first page's bound: the cursor is taken and the listing's tail is not dropped.
    const later = await log.list({ actor, since: new Date(), limit: 1, cursor: first.nextCursor! });
    const last = await log.list({ actor, since: new Date(), limit: 5, cursor: later.nextCursor! });
    expect([first, later, last].map((p) => p.items.length)).toEqual([1, 1, 1]);
    expect(last.nextCursor).toBeNull();
    // Whether there is a bound is still bound: a cursor of a bounded listing without one, and
    // the other way round, is refused.
    await expect(log.list({ actor, cursor: first.nextCursor! })).rejects.toMatchObject({ field: 'cursor' });
    const unbounded = await log.list({ actor, limit: 1 });
    await expect(log.list({ actor, since: start, cursor: unbounded.nextCursor! })).rejects.toMatchObject({
      field: 'cursor',
    });
  });
});
