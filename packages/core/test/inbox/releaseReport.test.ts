/**
 * The audit row of an inbox release says what it did. A forced release leaves a receipt whose
 * handler transaction is alive untouched (`running`); a release that handed some receipts of the
 * claim back and left others running did part of what was asked, and its row must say `partial`
 * (overallOutcome: `applied` only when every target was applied), not `applied`.
 */
import { createAuditLog, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { gate } from '../../../../test-support/holds';
import { beginHandler } from '../../src/inbox/sql/beginHandler';
import type { ClaimedReceipt } from '../../src/inbox/types';
import { claimedReceipts, receiptRow } from './helpers';

const LIMITS = { lockTimeoutMs: 1_000, transactionTimeoutMs: 10_000 };

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** Two receipts claimed under one token (one worker's claim), the first with its handler running. */
async function oneRunning(): Promise<{
  tenantId: string;
  token: string;
  running: ClaimedReceipt;
  idle: ClaimedReceipt;
  end: () => Promise<void>;
}> {
  const { tenantId, claims } = await claimedReceipts(t, 2);
  const [running, idle] = claims as [ClaimedReceipt, ClaimedReceipt];
  await t.db.execute('UPDATE ferry_inbox_receipts SET claim_token = $1::uuid WHERE id = $2::uuid', [
    running.claimToken,
    idle.id,
  ]);
  const begun = gate();
  const done = gate();
  const handler = t.db.transaction(async (tx) => {
    const { owned } = await beginHandler(tx, running, LIMITS);
    expect(owned).toBe(true);
    begun.open();
    await done.promise;
  });
  await Promise.race([begun.promise, handler]);
  return {
    tenantId,
    token: running.claimToken,
    running,
    idle,
    end: async () => {
      done.open();
      await handler;
    },
  };
}

async function latestRelease(actor: string) {
  const { items } = await createAuditLog(t.db).list({ action: 'inbox.release', actor, limit: 1 });
  const [entry] = items;
  return entry && { outcome: entry.outcome, results: entry.results, dryRun: entry.dryRun };
}

describe('the audit row of an inbox release', () => {
  for (const dryRun of [false, true]) {
    it(`is partial when a forced release left a running receipt of the claim${dryRun ? ' (dry run)' : ''}`, async () => {
      const claim = await oneRunning();
      const actor = `ops-${dryRun ? 'dry' : 'real'}`;
      try {
        const answer = await new InboxAdmin(t.prisma)
          .forTenant(claim.tenantId)
          .release({ claimToken: claim.token, force: true, actor, reason: 'worker died', dryRun });
        expect(answer).toEqual({ released: [claim.idle.id], running: [claim.running.id] });
      } finally {
        await claim.end();
      }
      expect(await latestRelease(actor)).toEqual({
        outcome: 'partial',
        results: { released: [claim.idle.id], running: [claim.running.id] },
        dryRun,
      });
      expect(await receiptRow(t, claim.running.id)).toMatchObject({ status: 'PROCESSING' });
    });
  }

  it('is none when every receipt of the claim was left running', async () => {
    const claim = await oneRunning();
    try {
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET status = 'COMPLETED', claim_token = NULL WHERE id = $1::uuid`,
        [claim.idle.id],
      );
      const answer = await new InboxAdmin(t.prisma)
        .forTenant(claim.tenantId)
        .release({ claimToken: claim.token, force: true, actor: 'ops-none' });
      expect(answer).toEqual({ released: [], running: [claim.running.id] });
    } finally {
      await claim.end();
    }
    expect(await latestRelease('ops-none')).toMatchObject({ outcome: 'none' });
  });
});
