import { randomUUID } from 'node:crypto';
import {
  InboxAdmin,
  InboxNotFoundError,
  InboxPermanentError,
  InboxPrivilegedAdmin,
  InboxReplayConflictError,
  InboxStateConflictError,
  type InboxHandlerContext,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow } from './helpers';

describe('inbox admin', () => {
  let t: TestDatabase;
  let admin: InboxAdmin;
  let fail = true;
  const contexts: InboxHandlerContext[] = [];
  let inbox: ReturnType<typeof makeInbox>;
  beforeAll(async () => {
    t = await createTestDatabase();
    admin = new InboxAdmin(t.prisma);
    inbox = makeInbox(t.prisma, {
      global: 'shared',
      handlers: {
        work: async (_p, context) => {
          contexts.push(context);
          if (fail) throw new InboxPermanentError('broken handler');
        },
        'work.rebuild': async (_p, context) => void contexts.push(context),
      },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  async function recordIn(status: 'PENDING' | 'DEAD' | 'COMPLETED', tenantId: string | null = 'acme') {
    const { record } = await inbox.accept(message({ consumer: 'work', tenantId, system: 'rabbitmq' }));
    if (status === 'PENDING') return record;
    fail = status === 'DEAD';
    for (let i = 0; i < 50 && (await receiptRow(t, record.id)).status === 'PENDING'; i += 1)
      await inbox.runOnce();
    fail = true;
    const stored = await admin[tenantId === null ? 'forGlobal' : 'forTenant'](tenantId as string).get(
      record.id,
    );
    expect(stored?.status).toBe(status);
    return stored!;
  }

  it('lists with cursors per scope and status, and get() never crosses scopes', async () => {
    const scope = `tenant-list-${randomUUID()}`;
    const ids = [];
    for (let i = 0; i < 5; i += 1)
      ids.push((await inbox.accept(message({ consumer: 'work', tenantId: scope }))).record.id);
    const tenant = admin.forTenant(scope);
    const first = await tenant.list({ status: 'PENDING', limit: 2 });
    expect(first.records).toHaveLength(2);
    const second = await tenant.list({ status: 'PENDING', limit: 2, cursor: first.nextCursor! });
    const third = await tenant.list({ status: 'PENDING', limit: 2, cursor: second.nextCursor! });
    expect(third.nextCursor).toBeNull();
    const seen = [...first.records, ...second.records, ...third.records].map((r) => r.id);
    expect(seen.sort()).toEqual([...ids].sort());
    await expect(tenant.list({ status: 'DEAD', cursor: first.nextCursor! })).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
    });
    expect((await tenant.list({ status: 'DEAD' })).records).toEqual([]);
    expect(await admin.forTenant('someone-else').get(ids[0]!)).toBeNull();
    expect(await admin.forGlobal().get(ids[0]!)).toBeNull();
    expect(await tenant.get('not-a-uuid')).toBeNull();
    const global = await recordIn('PENDING', null);
    expect(await admin.forGlobal().get(global.id)).toMatchObject({ tenantId: null });
    expect((await admin.forGlobal().list()).records.every((r) => r.tenantId === null)).toBe(true);
  });

  it('requeues DEAD only, at the observed version, keeping identity, payload, lifetime attempts and history', async () => {
    const dead = await recordIn('DEAD');
    const tenant = admin.forTenant('acme');
    const requeued = await tenant.requeue({
      id: dead.id,
      expectedVersion: dead.rowVersion,
      reason: 'fixed',
      actor: 'op-1',
    });
    expect(requeued).toMatchObject({
      id: dead.id,
      messageId: dead.messageId,
      payload: dead.payload,
      status: 'PENDING',
      attempts: 0,
      lifetimeAttempts: 1,
      rowVersion: dead.rowVersion + 1,
    });
    expect(requeued.requeueHistory).toEqual([
      expect.objectContaining({
        actor: 'op-1',
        reason: 'fixed',
        fromVersion: dead.rowVersion,
        attemptsInCycle: 1,
      }),
    ]);
    expect((await receiptRow(t, dead.id)).claim_token).not.toBeNull();
    // stale version, and not DEAD any more
    await expect(
      tenant.requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: 'again', actor: 'op-1' }),
    ).rejects.toBeInstanceOf(InboxStateConflictError);
    const completed = await recordIn('COMPLETED');
    await expect(
      tenant.requeue({ id: completed.id, expectedVersion: completed.rowVersion, reason: 'x', actor: 'op' }),
    ).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT', actualStatus: 'COMPLETED' });
    const pending = await recordIn('PENDING');
    await expect(
      tenant.requeue({ id: pending.id, expectedVersion: pending.rowVersion, reason: 'x', actor: 'op' }),
    ).rejects.toMatchObject({ actualStatus: 'PENDING' });
    await expect(
      admin.forTenant('other').requeue({ id: dead.id, expectedVersion: 2, reason: 'x', actor: 'op' }),
    ).rejects.toBeInstanceOf(InboxNotFoundError);
    await expect(
      tenant.requeue({ id: dead.id, expectedVersion: 1, reason: '', actor: 'op' }),
    ).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
    });
    // the requeued record runs again with a fresh cycle
    fail = false;
    for (let i = 0; i < 50 && (await receiptRow(t, dead.id)).status === 'PENDING'; i += 1)
      await inbox.runOnce();
    fail = true;
    expect(await tenant.get(dead.id)).toMatchObject({
      status: 'COMPLETED',
      attempts: 1,
      lifetimeAttempts: 2,
    });
  });

  it('lets exactly one of two concurrent requeues of the same version win', async () => {
    const dead = await recordIn('DEAD');
    const tenant = admin.forTenant('acme');
    const other = new InboxAdmin(t.newClient()).forTenant('acme');
    const results = await Promise.allSettled([
      tenant.requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: 'a', actor: 'op-a' }),
      other.requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: 'b', actor: 'op-b' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(InboxStateConflictError);
  });

  it('replays COMPLETED records idempotently by request id, with lineage on the record and the context', async () => {
    const source = await recordIn('COMPLETED');
    const tenant = admin.forTenant('acme');
    const request = {
      id: source.id,
      expectedVersion: source.rowVersion,
      requestId: randomUUID(),
      targetConsumer: 'work.rebuild',
      actor: 'op-1',
      reason: 'rebuild projection',
    };
    const replay = await tenant.replay(request);
    expect(replay.kind).toBe('accepted');
    expect(replay.record).toMatchObject({
      status: 'PENDING',
      consumer: 'work.rebuild',
      payload: source.payload,
      payloadFingerprint: source.payloadFingerprint,
      tenantId: 'acme',
      system: 'rabbitmq',
      replay: {
        sourceId: source.id,
        sourceVersion: source.rowVersion,
        requestId: request.requestId,
        actor: 'op-1',
        reason: 'rebuild projection',
      },
    });
    expect(await tenant.replay(request)).toEqual({ kind: 'duplicate', record: replay.record });
    await expect(tenant.replay({ ...request, reason: 'other' })).rejects.toBeInstanceOf(
      InboxReplayConflictError,
    );
    await expect(tenant.replay({ ...request, targetConsumer: 'work' })).rejects.toMatchObject({
      code: 'FERRY_REPLAY_CONFLICT',
    });
    expect(await tenant.get(source.id)).toMatchObject({ status: 'COMPLETED', rowVersion: source.rowVersion });
    contexts.length = 0;
    for (let i = 0; i < 50 && (await receiptRow(t, replay.record.id)).status === 'PENDING'; i += 1)
      await inbox.runOnce();
    expect(contexts.find((c) => c.receiptId === replay.record.id)?.replay).toMatchObject({
      sourceId: source.id,
      requestId: request.requestId,
    });
    // purge the source payload: the same request still returns its replay; a new one needs the payload
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET completed_at = now() - interval '1 hour' WHERE id = $1::uuid`,
      [source.id],
    );
    expect(await tenant.purgeCompletedPayload({ before: new Date(), limit: 1000 })).toMatchObject({
      purged: expect.any(Number),
    });
    const purged = await tenant.get(source.id);
    expect(purged?.payload).toBeNull();
    expect(await tenant.replay(request)).toMatchObject({
      kind: 'duplicate',
      record: { id: replay.record.id },
    });
    await expect(
      tenant.replay({ ...request, requestId: randomUUID(), expectedVersion: purged!.rowVersion }),
    ).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT' });
  });

  it('refuses replay of non-COMPLETED or stale records and keeps request ids per scope', async () => {
    const tenant = admin.forTenant('acme');
    const dead = await recordIn('DEAD');
    const base = { requestId: randomUUID(), targetConsumer: 'work.rebuild', actor: 'op', reason: 'r' };
    await expect(
      tenant.replay({ ...base, id: dead.id, expectedVersion: dead.rowVersion }),
    ).rejects.toMatchObject({
      code: 'FERRY_STATE_CONFLICT',
      actualStatus: 'DEAD',
    });
    const done = await recordIn('COMPLETED');
    await expect(
      tenant.replay({ ...base, id: done.id, expectedVersion: done.rowVersion - 1 }),
    ).rejects.toBeInstanceOf(InboxStateConflictError);
    await expect(
      admin.forTenant('zzz').replay({ ...base, id: done.id, expectedVersion: done.rowVersion }),
    ).rejects.toBeInstanceOf(InboxNotFoundError);
  });

  it('purges only COMPLETED payloads before the cutoff, bounded, keeping deduplication', async () => {
    const scope = `tenant-purge-${randomUUID()}`;
    const tenant = admin.forTenant(scope);
    const inputs = Array.from({ length: 3 }, () => message({ consumer: 'work', tenantId: scope }));
    for (const input of inputs) await inbox.accept(input);
    fail = false;
    const [firstInput] = inputs;
    for (let i = 0; i < 50; i += 1) {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE tenant_id = $1 AND status <> 'COMPLETED'`,
        [scope],
      );
      if (row?.n === 0 || !firstInput) break;
      await inbox.runOnce();
    }
    fail = true;
    const pendingInput = message({ consumer: 'work', tenantId: scope });
    const pending = await inbox.accept(pendingInput);
    const cutoff = new Date(Date.now() + 60_000);
    expect(await tenant.purgeCompletedPayload({ before: cutoff, limit: 2 })).toEqual({ purged: 2 });
    expect(await tenant.purgeCompletedPayload({ before: cutoff, limit: 2 })).toEqual({ purged: 1 });
    expect(await tenant.purgeCompletedPayload({ before: cutoff })).toEqual({ purged: 0 });
    expect((await tenant.get(pending.record.id))?.payload).toEqual(pendingInput.payload);
    for (const input of inputs) {
      const again = await inbox.accept(input);
      expect(again).toMatchObject({ kind: 'duplicate', record: { payload: null, status: 'COMPLETED' } });
      expect(again.record.payloadFingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
    await expect(inbox.accept({ ...inputs[0]!, payload: { changed: true } })).rejects.toMatchObject({
      code: 'FERRY_FINGERPRINT_CONFLICT',
    });
    await expect(tenant.purgeCompletedPayload({ before: cutoff, limit: 0 })).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
    });
  });

  it('counts retained records per status with the oldest pending work', async () => {
    const scope = `tenant-stats-${randomUUID()}`;
    const tenant = admin.forTenant(scope);
    expect(await tenant.stats()).toMatchObject({ total: 0, oldestPendingAt: null });
    await inbox.accept(message({ consumer: 'work', tenantId: scope }));
    await inbox.accept(message({ consumer: 'work', tenantId: scope }));
    const stats = await tenant.stats();
    expect(stats.counts).toEqual({ PENDING: 2, PROCESSING: 0, RETRYABLE: 0, COMPLETED: 0, DEAD: 0 });
    expect(stats.total).toBe(2);
    expect(stats.oldestPendingAt).toBeInstanceOf(Date);
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
  });

  it('offers cross-tenant admin only when explicitly enabled', async () => {
    expect(() => new InboxPrivilegedAdmin(t.prisma)).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'privilegedAdmin' }),
    );
    const privileged = new InboxPrivilegedAdmin(t.prisma, { privilegedAdmin: true });
    const a = await recordIn('PENDING', `x-${randomUUID()}`);
    expect(await privileged.get(a.id)).toMatchObject({ id: a.id });
    const page = await privileged.list({ limit: 500 });
    expect(new Set(page.records.map((r) => r.tenantId)).size).toBeGreaterThan(1);
    expect((await privileged.stats()).total).toBeGreaterThan(0);
  });
});
