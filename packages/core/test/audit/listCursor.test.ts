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
});
