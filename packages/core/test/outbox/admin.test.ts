import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createOutboxAdmin, emitMany, type OutboxStatus } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { statusOf, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

/** One row in `status`, reached through real transitions where possible. */
async function rowIn(status: OutboxStatus, tenantId: string | null = null): Promise<string> {
  const { ids } = await emitMany(t.db, [{ type: 'admin.test', payload: {}, tenantId }]);
  const id = ids[0]!;
  if (status === 'PENDING') return id;
  const token = randomUUID();
  await t.db.execute(
    `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
       lease_expires_at = now() + interval '1 minute', claim_count = claim_count + 1 WHERE id = $1::uuid`,
    [id, token],
  );
  if (status === 'PROCESSING') return id;
  await relayStore(t.db).complete(token, [
    {
      id,
      kind: status === 'SENT' ? 'sent' : 'permanent',
      error: status === 'SENT' ? null : 'boom',
      delayMs: 0,
    },
  ]);
  return id;
}

describe('outbox admin', () => {
  const admin = () => createOutboxAdmin(t.db);
  const matrix: Array<[OutboxStatus, string, string]> = [
    ['PENDING', 'conflict', 'applied'],
    ['PROCESSING', 'conflict', 'conflict'],
    ['SENT', 'conflict', 'conflict'],
    ['FAILED', 'applied', 'conflict'],
  ];
  it.each(matrix)('from %s: retry is %s, markFailed is %s', async (status, retryOutcome, markOutcome) => {
    const a = await rowIn(status);
    expect(await admin().retry(a)).toEqual({ id: a, outcome: retryOutcome });
    const b = await rowIn(status);
    expect(await admin().markFailed(b, 'operator said so')).toEqual({ id: b, outcome: markOutcome });
    const after = await statusOf(t.db, b);
    expect(after.status).toBe(markOutcome === 'applied' ? 'FAILED' : status);
  });

  it('missing ids are not_found; retry keeps the lifetime counter, clears errors and is due now', async () => {
    expect(await admin().retry(randomUUID())).toMatchObject({ outcome: 'not_found' });
    // A malformed id is a typo, refused (FERRY_VALIDATION_FAILED) rather than answered not_found.
    await expect(admin().retry('not-a-uuid')).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'id',
    });
    const id = await rowIn('FAILED');
    await admin().retry(id);
    const record = await admin().get(id);
    expect(record).toMatchObject({
      status: 'PENDING',
      retryCount: 0,
      claimCount: 1,
      lastError: null,
      failedAt: null,
    });
    const [due] = await t.db.query<{ due: boolean }>(
      'SELECT next_attempt_at <= now() AS due FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    expect(due?.due).toBe(true);
  });

  it('retryMany reports one outcome per id, in order', async () => {
    const failed = await rowIn('FAILED');
    const sent = await rowIn('SENT');
    const missing = randomUUID();
    expect(await admin().retryMany([failed, sent, missing])).toEqual([
      { id: failed, outcome: 'applied' },
      { id: sent, outcome: 'conflict' },
      { id: missing, outcome: 'not_found' },
    ]);
  });

  it('reports lost_claim when a concurrent transition wins', async () => {
    const id = await rowIn('FAILED');
    const other = listened(new Client({ connectionString: t.url }));
    await other.connect();
    await other.query('BEGIN');
    await other.query(`UPDATE outbox_events SET status = 'PENDING', failed_at = NULL WHERE id = $1::uuid`, [
      id,
    ]);
    const pending = admin().retry(id);
    await waitFor(async () => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      return (row?.n ?? 0) > 0;
    });
    await other.query('COMMIT');
    await other.end();
    expect(await pending).toEqual({ id, outcome: 'lost_claim' });
  });

  it('a tenant scope cannot read or change another tenant’s rows', async () => {
    const mine = await rowIn('FAILED', 'tenant-a');
    const theirs = await rowIn('FAILED', 'tenant-b');
    const scoped = admin().forTenant('tenant-a');
    expect(await scoped.get(theirs)).toBeNull();
    expect(await scoped.retry(theirs)).toMatchObject({ outcome: 'not_found' });
    expect(await scoped.markFailed(theirs, 'x')).toMatchObject({ outcome: 'not_found' });
    expect((await scoped.list()).items.map((r) => r.id)).toEqual([mine]);
    expect(await scoped.stats()).toMatchObject({ failed: 1 });
    expect(await scoped.retry(mine)).toMatchObject({ outcome: 'applied' });
    expect((await statusOf(t.db, theirs)).status).toBe('FAILED');
    expect(() => admin().forTenant('')).toThrow(expect.objectContaining({ field: 'tenantId' }));
  });

  it('forTenant refuses a tenant id longer than any emitter can store (255 characters)', () => {
    const longest = 'é'.repeat(255);
    expect(admin().forTenant(longest)).toBeDefined();
    expect(() => admin().forTenant(`${longest}x`)).toThrow(
      expect.objectContaining({
        field: 'tenantId',
        message: expect.stringContaining('at most 255 characters'),
      }),
    );
    expect(() => admin().forTenant('t'.repeat(100_000))).toThrow(
      expect.objectContaining({ field: 'tenantId' }),
    );
  });

  it('cursor pages over identical created_at have no gaps or repeats', async () => {
    const { ids } = await emitMany(
      t.db,
      Array.from({ length: 53 }, (_, i) => ({ type: 'page', payload: { i } })),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await admin().list({ limit: 10, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((r) => r.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...ids].reverse());
    await expect(admin().list({ cursor: 'garbage' })).rejects.toMatchObject({ field: 'cursor' });
  });

  it('stats, health thresholds and bounded purge of SENT rows', async () => {
    await rowIn('SENT');
    await rowIn('SENT');
    await rowIn('SENT');
    await rowIn('FAILED');
    await rowIn('PENDING');
    const stats = await admin().stats();
    expect(stats).toMatchObject({ pending: 1, processing: 0, sent: 3, failed: 1, expiredLeases: 0 });
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    expect(await admin().health()).toMatchObject({ healthy: false, problems: ['1 FAILED events'] });
    expect(await admin().health({ maxFailed: 1 })).toMatchObject({ healthy: true });
    const future = new Date(Date.now() + 60_000);
    expect(await admin().purgeSent({ before: future, limit: 2 })).toEqual({ deleted: 2 });
    expect(await admin().purgeSent({ before: new Date(0) })).toEqual({ deleted: 0 });
    expect(await admin().purgeSent({ before: future })).toEqual({ deleted: 1 });
    expect(await admin().stats()).toMatchObject({ sent: 0, failed: 1, pending: 1 });
    await expect(admin().purgeSent({ before: future, limit: 10_001 })).rejects.toMatchObject({
      field: 'limit',
    });
  });
});
