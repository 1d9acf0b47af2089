import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { beginHandler } from '../../src/inbox/sql/beginHandler';
import { completeReceipt } from '../../src/inbox/sql/complete';
import { receiptLock } from '../../src/inbox/sql/fragments';
import { claimedReceipts, receiptRow } from './helpers';
import { pausingBefore } from '../../../../test-support/executors';

const LIMITS = { lockTimeoutMs: 1_000, transactionTimeoutMs: 10_000 };

/**
 * A dry run of the forced release answers what the release would do without taking a lock: it
 * took the receipt's advisory lock exclusively (rolled back with its savepoint), so a handler
 * transaction beginning meanwhile read its claim as lost, and the receipt waited for its lease.
 */
describe('dry run of a forced release', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  async function claimed() {
    const { tenantId, claims } = await claimedReceipts(t);
    return { tenantId, claim: claims[0]! };
  }

  it('Review finding (failed first): lets a handler beginning while it is open run and complete', async () => {
    const { tenantId, claim } = await claimed();
    let handled: string | undefined;
    // Inside the dry run's transaction, after its release statement, before its rollback.
    const handler = async () => {
      handled = await t.db.transaction(async (tx) =>
        (await beginHandler(tx, claim, LIMITS)).owned
          ? completeReceipt(tx, claim.id, claim.claimToken)
          : 'not begun',
      );
    };
    const admin = new InboxAdmin(pausingBefore(t.db, 'ROLLBACK TO SAVEPOINT ', handler));
    const answer = await admin
      .forTenant(tenantId)
      .release({ claimToken: claim.claimToken, force: true, dryRun: true, actor: 'ops', reason: 'stuck?' });
    expect({ answer, handled }).toEqual({
      answer: { released: [claim.id], running: [] },
      handled: 'completed',
    });
    expect(await receiptRow(t, claim.id)).toMatchObject({ status: 'COMPLETED' });
  });

  it('answers a receipt whose handler transaction is alive as running, and changes nothing', async () => {
    const { tenantId, claim } = await claimed();
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    const dryRun = () =>
      admin.release({
        claimToken: claim.claimToken,
        force: true,
        dryRun: true,
        actor: 'ops',
        reason: 'stuck?',
      });
    const handler = listened(new Client({ connectionString: t.url }));
    await handler.connect();
    try {
      await handler.query('BEGIN');
      await handler.query(`SELECT pg_try_advisory_xact_lock_shared(${receiptLock('$1::uuid')})`, [claim.id]);
      expect(await dryRun()).toEqual({ released: [], running: [claim.id] });
    } finally {
      await handler.query('ROLLBACK');
      await handler.end();
    }
    expect(await dryRun()).toEqual({ released: [claim.id], running: [] });
    expect(await receiptRow(t, claim.id)).toMatchObject({
      status: 'PROCESSING',
      claim_token: claim.claimToken,
    });
  });
});
