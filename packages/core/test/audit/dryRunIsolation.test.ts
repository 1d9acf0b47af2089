/**
 * A dry run in the caller's transaction runs its change in a savepoint and rolls it back. That is
 * only right if nothing else of the transaction happens between the savepoint and its rollback:
 * another ferry call on the same transaction (an emit, a real admin action, a second dry run)
 * whose statements land in that window is rolled back with the dry run, although it answered
 * success. And the savepoint must be the dry run's own: one named as a savepoint of the caller's
 * (or of another dry run) took its place in the caller's ROLLBACK TO.
 *
 * Contract: docs/inbox.md and docs/outbox.md (Admin): "the change runs in a savepoint that is
 * rolled back, the result is what the real call would return"; nothing else of the caller's
 * transaction is undone, and the transaction is usable afterwards.
 *
 * Each case holds the dry run inside its savepoint deterministically: the event it would retry is
 * locked by another session, so the dry run's UPDATE waits, and the other call is made meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { Client, Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createOutboxAdmin,
  emit,
  fromPrisma,
  InboxAdmin,
  type AdminResult,
  type PrismaTransactionLike,
} from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { useAdminDatabase, type AdminFixture } from '../../../../test-support/adminFixture';

const database = useAdminDatabase();

/** Locks event `id` in another session until the returned function is called. */
async function lockEvent(id: string): Promise<() => Promise<void>> {
  const holder = new Client({ connectionString: database.t().url });
  holder.on('error', () => undefined);
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM outbox_events WHERE id = $1::uuid FOR UPDATE', [id]);
  return async () => {
    await holder.query('ROLLBACK');
    await holder.end();
  };
}

async function someoneWaitsOnLock(): Promise<void> {
  await waitUntil(
    'a statement waits on the held lock',
    async () => {
      const [row] = await database
        .t()
        .db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
      return (row?.n ?? 0) > 0;
    },
    { timeoutMs: 15_000, intervalMs: 20 },
  );
}

/**
 * Runs a dry-run retry of `f.failed` in `tx`, held inside its savepoint until `other(tx)` has been
 * called; resolves both answers.
 */
async function duringDryRun<T>(
  f: AdminFixture,
  tx: Parameters<typeof createOutboxAdmin>[0],
  other: () => Promise<T>,
): Promise<[AdminResult, T]> {
  const unlock = await lockEvent(f.failed);
  try {
    const dryRun = createOutboxAdmin(tx).forTenant('acme').retry(f.failed, { actor: 'dry', dryRun: true });
    dryRun.catch(() => undefined);
    await someoneWaitsOnLock();
    const second = other();
    second.catch(() => undefined);
    await unlock();
    return [await dryRun, await second];
  } finally {
    await unlock().catch(() => undefined);
  }
}

async function facts(f: AdminFixture, marker?: string) {
  const [row] = await database.t().db.query<Record<string, unknown>>(
    `SELECT (SELECT status FROM outbox_events WHERE id = $1::uuid) AS retried,
            (SELECT status FROM ferry_inbox_receipts WHERE id = $2::uuid) AS requeued,
            (SELECT count(*)::int FROM outbox_events WHERE event_type = $3) AS emitted,
            (SELECT coalesce(array_agg(action || ' ' || outcome || CASE WHEN dry_run THEN ' (dry run)' ELSE '' END
               ORDER BY action), '{}') FROM ferry_operator_audit WHERE $1::text = ANY(ids) OR $2::text = ANY(ids)) AS audited`,
    [f.failed, f.tenant.dead.id, marker ?? 'none'],
  );
  return row;
}

function requeue(tx: Parameters<typeof createOutboxAdmin>[0], f: AdminFixture, dryRun: boolean) {
  return new InboxAdmin(tx).forTenant('acme').requeue({
    id: f.tenant.dead.id,
    expectedVersion: f.tenant.dead.expectedVersion,
    actor: 'ops',
    reason: 'handler fixed',
    dryRun,
  });
}

describe('a dry run in the caller transaction is isolated from the rest of it', () => {
  it('an emit made while a dry run runs in the same Prisma transaction commits', async () => {
    const f = await database.fixture();
    const type = `dry.${randomUUID()}`;
    await database
      .t()
      .prisma.$transaction(
        (tx) => duringDryRun(f, tx, () => emit(tx, { type, payload: {}, tenantId: 'acme' })),
        { timeout: 30_000 },
      );
    expect(await facts(f, type)).toEqual({
      retried: 'FAILED',
      requeued: 'DEAD',
      emitted: 1,
      audited: ['outbox.retry applied (dry run)'],
    });
  });

  it('a real requeue made while a dry run runs in the same Prisma transaction commits with its audit row', async () => {
    const f = await database.fixture();
    const [dry, real] = await database
      .t()
      .prisma.$transaction((tx) => duringDryRun(f, tx, () => requeue(tx, f, false)), { timeout: 30_000 });
    expect({ dry: dry.outcome, real: real.status }).toEqual({ dry: 'applied', real: 'PENDING' });
    expect(await facts(f)).toEqual({
      retried: 'FAILED',
      requeued: 'PENDING',
      emitted: 0,
      audited: ['inbox.requeue applied', 'outbox.retry applied (dry run)'],
    });
  });

  it('two dry runs in the same Prisma transaction keep both audit rows and change nothing', async () => {
    const f = await database.fixture();
    await database
      .t()
      .prisma.$transaction((tx) => duringDryRun(f, tx, () => requeue(tx, f, true)), { timeout: 30_000 });
    expect(await facts(f)).toEqual({
      retried: 'FAILED',
      requeued: 'DEAD',
      emitted: 0,
      audited: ['inbox.requeue applied (dry run)', 'outbox.retry applied (dry run)'],
    });
  });

  it('a real requeue made while a dry run runs in the same Kysely transaction commits', async () => {
    const f = await database.fixture();
    const pool = listened(new Pool({ connectionString: database.t().url, max: 2 }));
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    try {
      await kysely.transaction().execute((trx) => duringDryRun(f, trx, () => requeue(trx, f, false)));
    } finally {
      await kysely.destroy();
    }
    expect(await facts(f)).toEqual({
      retried: 'FAILED',
      requeued: 'PENDING',
      emitted: 0,
      audited: ['inbox.requeue applied', 'outbox.retry applied (dry run)'],
    });
  });

  it("a dry run leaves the caller's own savepoints as they were, whatever their names", async () => {
    const f = await database.fixture();
    const type = `savepoint.${randomUUID()}`;
    await database.t().prisma.$transaction(async (tx: PrismaTransactionLike) => {
      const db = fromPrisma(tx);
      for (const name of ['ferry_dry_run', 'mine']) {
        await db.execute(`SAVEPOINT ${name}`);
        await emit(tx, { type, payload: { name }, tenantId: 'acme' });
        await createOutboxAdmin(tx).forTenant('acme').retry(f.failed, { actor: 'dry', dryRun: true });
        // The caller's rollback to its own savepoint undoes its own emit, and only that.
        await db.execute(`ROLLBACK TO SAVEPOINT ${name}`);
        await db.execute(`RELEASE SAVEPOINT ${name}`);
      }
      await emit(tx, { type, payload: { name: 'kept' }, tenantId: 'acme' });
    });
    const rows = await database
      .t()
      .db.query<{ name: string }>(
        `SELECT payload->>'name' AS name FROM outbox_events WHERE event_type = $1`,
        [type],
      );
    expect(rows.map((r) => r.name)).toEqual(['kept']);
  });
});
