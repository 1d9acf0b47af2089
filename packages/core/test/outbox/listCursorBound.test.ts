/**
 * Review 12 finding: a list cursor carries its first page's time bound (listCursor.ts, ce1016f) and the
 * digest binds only whether a bound is given. A later page given another explicit bound is listed
 * with the cursor's instead, silently: it returns rows the caller's own `createdBefore` excludes.
 * Before ce1016f such a cursor was refused (the bound was part of the digest). A relative age
 * recomputed per call is the case the change is for; an explicit, different instant is another
 * listing and should be refused (or honoured), never answered with rows that fail it.
 */
import { createOutboxAdmin, emitMany } from '@ferry/core';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('Review finding (failed first): outbox list cursor and an explicit createdBefore on a later page', () => {
  it('never returns a row created at or after the createdBefore the call was given', async () => {
    const tenant = `r12-${randomUUID()}`;
    await emitMany(
      t.db,
      Array.from({ length: 3 }, (_, i) => ({ type: 'r12.bound', payload: { i }, tenantId: tenant })),
    );
    const scoped = createOutboxAdmin(t.db).forTenant(tenant);
    const first = await scoped.list({ createdBefore: new Date('9999-01-01T00:00:00.000Z'), limit: 1 });
    expect(first.nextCursor).not.toBeNull();
    const before = new Date('2000-01-01T00:00:00.000Z');
    const answer = scoped.list({ createdBefore: before, cursor: first.nextCursor!, limit: 10 }).then(
      (page) => ({ rowsAfterTheGivenBound: page.items.filter((r) => r.createdAt >= before).length }),
      (error: { field?: string }) => ({ refused: error.field }),
    );
    // Expected: refused (field cursor) or no row; actual: the two remaining rows, all of 2026.
    expect(await answer).not.toEqual({ rowsAfterTheGivenBound: 2 });
  });
});
