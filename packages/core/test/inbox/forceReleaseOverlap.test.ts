/**
 * Two forced releases of one claim at once (two operators paged for the same stuck worker, or a
 * CLI call retried while the first is still in its transaction).
 *
 * What happened on main: the second release found the receipt's advisory lock held (exclusively,
 * by the first release) and answered the receipt under `running`, which says a live handler holds
 * it: the audit row `none`, the CLI "running", although no handler ever ran and the first release
 * handed it back a moment later. A dry run said the same.
 *
 * What should happen: a receipt another forced release is taking is not this call's to answer:
 * neither `released` nor `running` (as a call made just after the first one committed answers
 * it); `running` stays for a live handler's shared lock.
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

/** Runs `during` while another forced release of the claim is in its open transaction. */
async function whileAnotherReleases<T>(
  tenantId: string,
  claimToken: string,
  during: () => Promise<T>,
  limit?: number,
): Promise<{ first: unknown; second: T }> {
  const done = gate();
  const inside = gate();
  const first = t.db.transaction(async (tx) => {
    const answer = await new InboxAdmin(tx)
      .forTenant(tenantId)
      .release({ claimToken, force: true, actor: 'ops-first', reason: 'worker died', limit });
    inside.open();
    await done.promise;
    return answer;
  });
  try {
    await Promise.race([inside.promise, first]);
    const second = await during();
    done.open();
    return { first: await first, second };
  } finally {
    done.open();
    await first.catch(() => undefined);
  }
}

async function latestRelease(actor: string) {
  const { items } = await createAuditLog(t.db).list({ action: 'inbox.release', actor, limit: 1 });
  const [entry] = items;
  return entry && { outcome: entry.outcome, results: entry.results };
}

describe('overlapping forced releases of one claim', () => {
  for (const dryRun of [false, true]) {
    it(`do not answer a receipt the other is releasing as running${dryRun ? ' (dry run)' : ''}`, async () => {
      const { tenantId, claims } = await claimedReceipts(t);
      const claim = claims[0]!;
      const actor = `ops-second-${dryRun ? 'dry' : 'real'}`;
      const { first, second } = await whileAnotherReleases(tenantId, claim.claimToken, () =>
        new InboxAdmin(t.db)
          .forTenant(tenantId)
          .release({ claimToken: claim.claimToken, force: true, actor, reason: 'worker died', dryRun }),
      );
      const row = await receiptRow(t, claim.id);
      expect({
        first,
        second,
        audit: await latestRelease(actor),
        row: { status: row.status, claim: row.claim_token },
      }).toEqual({
        first: { released: [claim.id], running: [] },
        second: { released: [], running: [] },
        audit: { outcome: 'none', results: { released: [], running: [] } },
        row: { status: 'PENDING', claim: null },
      });
    });
  }

  // A CLI drain stops once a pass answers fewer ids than its bound: the receipts the other release
  // is taking must not fill this one's bound while others of the claim are still PROCESSING.
  for (const dryRun of [false, true]) {
    it(`take the claim's other receipts within their limit${dryRun ? ' (dry run)' : ''}`, async () => {
      const { tenantId, claims } = await claimedReceipts(t, 3);
      const [a, b, c] = [...claims].sort((x, y) => (x.id < y.id ? -1 : 1)) as [
        ClaimedReceipt,
        ClaimedReceipt,
        ClaimedReceipt,
      ];
      // One worker's claim: one token, one lease (the release takes them in id order).
      await t.db.execute(
        `UPDATE ferry_inbox_receipts SET claim_token = $1::uuid, lease_expires_at = now() + interval '1 minute'
          WHERE id = ANY ($2::uuid[])`,
        [a.claimToken, [a.id, b.id, c.id]],
      );
      const { first, second } = await whileAnotherReleases(
        tenantId,
        a.claimToken,
        () =>
          new InboxAdmin(t.db)
            .forTenant(tenantId)
            .release({ claimToken: a.claimToken, force: true, actor: 'ops', limit: 2, dryRun }),
        2,
      );
      expect({ first, second }).toEqual({
        first: { released: [a.id, b.id], running: [] },
        second: { released: [c.id], running: [] },
      });
    });
  }

  it('still answer a receipt whose handler transaction is alive as running', async () => {
    const { tenantId, claims } = await claimedReceipts(t);
    const claim = claims[0]!;
    const begun = gate();
    const done = gate();
    const handler = t.db.transaction(async (tx) => {
      const { owned } = await beginHandler(tx, claim, LIMITS);
      begun.open();
      await done.promise;
      return owned;
    });
    try {
      await Promise.race([begun.promise, handler]);
      const admin = new InboxAdmin(t.db).forTenant(tenantId);
      const answers = [];
      for (const dryRun of [true, false]) {
        answers.push(
          await admin.release({ claimToken: claim.claimToken, force: true, actor: 'ops', dryRun }),
        );
      }
      expect(answers).toEqual([
        { released: [], running: [claim.id] },
        { released: [], running: [claim.id] },
      ]);
    } finally {
      done.open();
    }
    expect(await handler).toBe(true);
  });
});
