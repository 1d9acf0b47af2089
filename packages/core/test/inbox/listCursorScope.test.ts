// Review finding (failed first).
import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

/**
 * Inbox list cursors carry the filter they were issued for, "so a cursor reused
 * with other filters is refused instead of silently skipping rows" (admin/cursor.ts), but not the
 * scope: tenant A's cursor given to tenant B's list (an operator pasting the wrong line) starts
 * B's listing after A's last id and silently skips B's receipts before it.
 */
describe("an inbox list cursor of another tenant's scope", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('is refused, not used to skip rows', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    for (let i = 0; i < 6; i += 1) {
      await inbox.accept(message({ tenantId: a }));
      await inbox.accept(message({ tenantId: b }));
    }
    const admin = new InboxAdmin(t.prisma);
    const pageOfA = await admin.forTenant(a).list({ limit: 3 });
    expect(pageOfA.nextCursor).not.toBeNull();
    await expect(admin.forTenant(b).list({ cursor: pageOfA.nextCursor! })).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
    });
  });
});
