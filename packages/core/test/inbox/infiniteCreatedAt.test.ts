/**
 * An inbox receipt whose created_at SQL set to 'infinity' or '-infinity' (the table's CHECKs leave
 * it free; an import or an operator parks a row that way), or to a finite instant no JavaScript
 * Date holds: its neighbours' admin reads never fail for it (as the outbox's, review 87).
 * Failed first: stats() refused for the whole scope, "cannot subtract infinite timestamps".
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it.each(['infinity', '-infinity', '294276-12-31 23:59:59.999999+00'])(
  'a receipt created at %s: stats, get and list answer for it and its neighbour',
  async (createdAt) => {
    const scope = `tenant-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, { handlers: { work: async () => undefined } });
    const odd = (await inbox.accept(message({ consumer: 'work', tenantId: scope }))).record.id;
    await t.db.execute('UPDATE ferry_inbox_receipts SET created_at = $2::timestamptz WHERE id = $1', [
      odd,
      createdAt,
    ]);
    const neighbour = (await inbox.accept(message({ consumer: 'work', tenantId: scope }))).record.id;
    const tenant = new InboxAdmin(t.prisma).forTenant(scope);

    const stats = await tenant.stats();
    expect(stats.counts.PENDING).toBe(2);
    expect(typeof stats.oldestPendingAgeMs).toBe('number');
    expect((await tenant.get(odd))?.id).toBe(odd);
    const listed = await tenant.list({ status: 'PENDING' });
    expect(listed.records.map((record) => record.id).sort()).toEqual([odd, neighbour].sort());
    await inbox.close();
  },
);
