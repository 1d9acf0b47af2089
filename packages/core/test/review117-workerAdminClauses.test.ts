import { randomUUID } from 'node:crypto';
import { InboxAdmin, type InboxHandlerContext, type InboxRecord } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow, waitFor } from './inbox/helpers';

/**
 * Review 117: clauses of spec/002 no earlier test proved as written against PostgreSQL:
 * - worker.consumers restricts claims AND recovery (abandoned claims, the exhausted sweep);
 * - requeue resets the whole retry-cycle budget (a full second cycle of maxAttempts claims)
 *   and preserves the claim token as it was;
 * - context.replay carries the whole lineage (source id and version, request id, actor,
 *   reason, request time), the same as record.replay;
 * - replay request ids are unique within the source's scope: the same UUID in another tenant
 *   or in the global scope is another request;
 * - stats count the admin's scope only (forGlobal is not every tenant).
 */
/** Runs the worker until the receipt reaches `status`; the record then. */
function untilStatus(
  inbox: { runOnce(): Promise<unknown> },
  admin: { get(id: string): Promise<InboxRecord | null> },
  id: string,
  status: InboxRecord['status'],
): Promise<InboxRecord> {
  return waitFor(status, async () => {
    await inbox.runOnce();
    const now = await admin.get(id);
    return now?.status === status ? now : undefined;
  });
}

describe('review 117: worker and admin clauses of spec/002', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  /** A crashed worker's claim: PROCESSING, its lease expired, `attempts` spent. */
  async function abandon(id: string, attempts: number): Promise<void> {
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = gen_random_uuid(),
         lease_expires_at = now() - interval '1 second', attempts = $2, lifetime_attempts = $2,
         row_version = row_version + 1
       WHERE id = $1::uuid`,
      [id, attempts],
    );
  }

  it('recovers and sweeps abandoned claims of its own consumers only (worker.consumers)', async () => {
    const tenantId = `t-${randomUUID()}`;
    const handlers = { mine: async () => undefined, theirs: async () => undefined };
    const owner = makeInbox(t.prisma, { handlers, worker: { consumers: ['mine'], maxAttempts: 3 } });
    const other = makeInbox(t.prisma, { handlers, worker: { consumers: ['theirs'], maxAttempts: 3 } });
    const accept = async (consumer: string) =>
      (await owner.accept(message({ consumer, tenantId }))).record.id;
    const [mineRecoverable, theirsRecoverable, theirsSpent] = [
      await accept('mine'),
      await accept('theirs'),
      await accept('theirs'),
    ];
    await abandon(mineRecoverable, 1);
    await abandon(theirsRecoverable, 1);
    await abandon(theirsSpent, 3);

    await owner.runOnce();
    expect(await receiptRow(t, mineRecoverable)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(await receiptRow(t, theirsRecoverable)).toMatchObject({ status: 'PROCESSING', attempts: 1 });
    expect(await receiptRow(t, theirsSpent)).toMatchObject({ status: 'PROCESSING', attempts: 3 });

    await other.runOnce();
    expect(await receiptRow(t, theirsRecoverable)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
    expect(await receiptRow(t, theirsSpent)).toMatchObject({ status: 'DEAD', attempts: 3 });
  });

  it('gives a requeued receipt a whole new retry cycle of maxAttempts claims and keeps its claim token', async () => {
    const tenantId = `t-${randomUUID()}`;
    let runs = 0;
    const inbox = makeInbox(t.prisma, {
      worker: { maxAttempts: 2 },
      handlers: {
        flaky: async () => {
          runs += 1;
          throw new Error(`failure ${runs}`);
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'flaky', tenantId }));
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    const untilDead = () => untilStatus(inbox, admin, record.id, 'DEAD');
    const dead = await untilDead();
    expect(dead).toMatchObject({ attempts: 2, lifetimeAttempts: 2 });
    const token = (await receiptRow(t, record.id)).claim_token;
    const requeued = await admin.requeue({
      id: record.id,
      expectedVersion: dead.rowVersion,
      reason: 'second cycle',
      actor: 'op-117',
    });
    expect(requeued).toMatchObject({ status: 'PENDING', attempts: 0, lifetimeAttempts: 2 });
    expect((await receiptRow(t, record.id)).claim_token).toBe(token);

    const deadAgain = await untilDead();
    expect(runs).toBe(4);
    expect(deadAgain).toMatchObject({ attempts: 2, lifetimeAttempts: 4, payload: record.payload });
    expect(deadAgain.requeueHistory).toEqual([
      expect.objectContaining({ actor: 'op-117', reason: 'second cycle', attemptsInCycle: 2 }),
    ]);
  });

  it('gives the replay handler the whole lineage on context.replay, equal to record.replay', async () => {
    const tenantId = `t-${randomUUID()}`;
    const contexts: InboxHandlerContext[] = [];
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: async () => undefined,
        'orders.rebuild': async (_p, context) => void contexts.push(context),
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'orders', tenantId }));
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    const source = await untilStatus(inbox, admin, record.id, 'COMPLETED');
    const requestId = randomUUID();
    const { record: replay } = await admin.replay({
      id: source.id,
      expectedVersion: source.rowVersion,
      requestId,
      targetConsumer: 'orders.rebuild',
      actor: 'op-117',
      reason: 'projection rebuild',
    });
    expect(replay.replay).toEqual({
      sourceId: source.id,
      sourceVersion: source.rowVersion,
      requestId,
      actor: 'op-117',
      reason: 'projection rebuild',
      requestedAt: expect.any(Date),
    });
    await waitFor('replay ran', async () => {
      await inbox.runOnce();
      return contexts.length > 0;
    });
    expect(contexts[0]).toMatchObject({ receiptId: replay.id, replay: replay.replay });
  });

  it('keeps replay request ids per source scope: the same UUID in another tenant or global is another request', async () => {
    const tenants = [`a-${randomUUID()}`, `b-${randomUUID()}`, null];
    const inbox = makeInbox(t.prisma, {
      global: 'shared',
      handlers: { orders: async () => undefined, 'orders.rebuild': async () => undefined },
    });
    const requestId = randomUUID();
    const base = { requestId, targetConsumer: 'orders.rebuild', actor: 'op', reason: 'r' };
    const replays = [];
    for (const tenantId of tenants) {
      const { record } = await inbox.accept(message({ consumer: 'orders', tenantId }));
      const admin = new InboxAdmin(t.prisma)[tenantId === null ? 'forGlobal' : 'forTenant'](tenantId!);
      const source = await untilStatus(inbox, admin, record.id, 'COMPLETED');
      replays.push(await admin.replay({ ...base, id: source.id, expectedVersion: source.rowVersion }));
    }
    expect(replays.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(replays.map((r) => r.record.tenantId)).toEqual(tenants);
    expect(new Set(replays.map((r) => r.record.id)).size).toBe(3);
  });

  it('counts statistics of its own scope only: forGlobal is not every tenant', async () => {
    const a = `a-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, { global: 'shared', handlers: { orders: async () => undefined } });
    const globalBefore = await new InboxAdmin(t.prisma).forGlobal().stats();
    await inbox.accept(message({ consumer: 'orders', tenantId: a }));
    await inbox.accept(message({ consumer: 'orders', tenantId: a }));
    await inbox.accept(message({ consumer: 'orders', tenantId: null }));
    const admin = new InboxAdmin(t.prisma);
    expect((await admin.forTenant(a).stats()).counts.PENDING).toBe(2);
    expect((await admin.forGlobal().stats()).counts.PENDING).toBe(globalBefore.counts.PENDING + 1);
  });
});
