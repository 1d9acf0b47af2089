import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { receiptLock } from '../../src/inbox/sql/fragments';
import { claimedReceipts, receiptRow } from './helpers';

/**
 * Review finding (failed first): the forced release picked its candidates FOR UPDATE SKIP LOCKED
 * before it tried the advisory lock, so a live handler transaction that has also locked its
 * receipt row (its completion UPDATE ran, the commit has not) was skipped: answered neither
 * `running` nor `released`. The operator (and `ferry inbox release --force`: "nothing to do",
 * exit 0) was told the named claim holds nothing, while the receipt is PROCESSING under it.
 */
describe('forced release of a receipt whose row another transaction locked', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  /** Runs `work` while another session's transaction has run `statements` (each on `id`). */
  async function whileHeld<T>(id: string, statements: readonly string[], work: () => Promise<T>): Promise<T> {
    const other = listened(new Client({ connectionString: t.url }));
    await other.connect();
    try {
      await other.query('BEGIN');
      for (const statement of statements) await other.query(statement, [id]);
      return await work();
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
  }

  it('Review finding (failed first): answers a live handler that row-locked it as running', async () => {
    const { tenantId, claims } = await claimedReceipts(t);
    const [claim] = claims as [(typeof claims)[number]];
    // What a handler transaction holds once its completion ran: the shared advisory lock
    // (beginHandler) and the receipt's row lock (completeReceipt's UPDATE).
    const handler = [
      `SELECT pg_try_advisory_xact_lock_shared(${receiptLock('$1::uuid')})`,
      'UPDATE ferry_inbox_receipts SET updated_at = now() WHERE id = $1::uuid',
    ];
    const answer = await whileHeld(claim.id, handler, () =>
      new InboxAdmin(t.prisma)
        .forTenant(tenantId)
        .release({ claimToken: claim.claimToken, force: true, actor: 'ops', reason: 'stuck?' }),
    );
    expect(answer).toEqual({ released: [], running: [claim.id] });
  });

  it('answers a row locked without the advisory lock as running, each candidate within the limit', async () => {
    const { tenantId, claims } = await claimedReceipts(t, 3);
    // Each claim has its own token; the statement takes any number of rows under one: three here,
    // one lease, so its order is by id.
    const claimToken = claims[0]!.claimToken;
    const [first, ...rest] = claims.map((c) => c.id).sort() as [string, ...string[]];
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET claim_token = $1::uuid, lease_expires_at = now() + interval '1 minute'
       WHERE id = ANY ($2::uuid[])`,
      [claimToken, [first, ...rest]],
    );
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    const release = (limit: number) => admin.release({ claimToken, force: true, limit, actor: 'ops' });
    const rowLock = ['SELECT 1 FROM ferry_inbox_receipts WHERE id = $1::uuid FOR UPDATE'];
    const answers = await whileHeld(first, rowLock, async () => [await release(1), await release(3)]);
    // The locked first candidate counts against the limit: answered, not replaced by another.
    expect(answers).toEqual([
      { released: [], running: [first] },
      { released: rest, running: [first] },
    ]);
    expect(await release(3)).toEqual({ released: [first], running: [] });
    expect(await receiptRow(t, first)).toMatchObject({ status: 'PENDING', claim_token: null });
  });
});
