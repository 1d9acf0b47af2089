/**
 * Review 123: a dry run of the outbox's forced release (`ferry outbox release --claim-token T
 * --force --dry-run`, what an operator runs to ask "is this claim dead?") ran the release itself in
 * a savepoint: its UPDATE locked the claim's rows until the savepoint was rolled back. A relay still
 * holding that claim, completing its batch meanwhile, waited on the dry run (and, under its
 * lock_timeout, failed its completion: the batch is published again once its lease expires).
 *
 * Contract: a dry run "computes the outcome and changes nothing" (AuditOptions.dryRun); the inbox's
 * release already answers its dry run without a lock (forceReleaseDryRun.test.ts): a dry run must
 * not disturb the live process it is asked about.
 *
 * The dry run is held open deterministically: the relay completes its batch just before the dry
 * run's ROLLBACK TO SAVEPOINT, on a session whose lock_timeout turns a wait into an answer.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createOutboxAdmin, emitMany, fromPg } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { pausingBefore } from '../../../test-support/executors';

let t: TestDatabase;
let relayPool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  relayPool = listened(new Pool({ connectionString: t.url, max: 2, options: '-c lock_timeout=2000' }));
});
afterAll(async () => {
  await relayPool.end();
  await t.drop();
});

/** An event claimed by a live relay: PROCESSING under `token`, its lease ten minutes ahead. */
async function claimedEvent(token: string): Promise<string> {
  const { ids } = await emitMany(t.db, [{ type: 'dry.release', payload: {}, tenantId: 'acme' }]);
  await t.db.execute(
    `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
       claim_count = claim_count + 1, lease_expires_at = now() + interval '10 minutes'
     WHERE id = $1::uuid`,
    [ids[0], token],
  );
  return ids[0]!;
}

it('a dry-run forced release lets a live relay complete its claim while it is open', async () => {
  const token = randomUUID();
  const id = await claimedEvent(token);
  let relay: string | undefined;
  // Inside the dry run's transaction, after its release statement, before its rollback.
  const completeBatch = async () => {
    relay = await relayStore(fromPg(relayPool))
      .complete(token, [{ id, kind: 'sent', error: null, delayMs: 0 }])
      .then(
        () => 'completed',
        (error: { code?: string }) => `failed: ${error.code}`,
      );
  };
  const admin = createOutboxAdmin(pausingBefore(t.db, 'ROLLBACK TO SAVEPOINT ', completeBatch));
  const answer = await admin.release({
    claimToken: token,
    force: true,
    dryRun: true,
    actor: 'ops',
    reason: 'is this claim dead?',
  });
  expect({ answer, relay }).toEqual({ answer: { released: [id] }, relay: 'completed' });
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  expect(row?.status).toBe('SENT');
});

it('a dry-run forced release changes nothing and answers what the release does', async () => {
  const token = randomUUID();
  const ids = [await claimedEvent(token), await claimedEvent(token)].sort();
  const other = await claimedEvent(randomUUID());
  const admin = createOutboxAdmin(t.db).forTenant('acme');
  const dry = await admin.release({ claimToken: token, force: true, dryRun: true, actor: 'ops', limit: 1 });
  const rows = await t.db.query<{ status: string }>(
    `SELECT status FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [[...ids, other]],
  );
  expect(rows.map((r) => r.status)).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING']);
  const real = await admin.release({ claimToken: token, force: true, actor: 'ops', limit: 1 });
  expect(dry).toEqual(real);
  expect(dry.released).toHaveLength(1);
  const rest = await admin.release({ claimToken: token, force: true, dryRun: true, actor: 'ops' });
  expect(rest.released).toEqual(ids.filter((i) => i !== real.released[0]));
});
