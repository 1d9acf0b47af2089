import { randomUUID } from 'node:crypto';
import { createAuditLog, createOutboxAdmin, emitMany, Inbox, InboxAdmin, type AuditEntry } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
let inbox: Inbox;
beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, { logger: pino({ level: 'silent' }), handlers: { work: async () => {} } });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

async function outboxRow(id: string) {
  const [row] = await t.db.query<{ status: string; retry_count: number; claim_token: string | null }>(
    'SELECT status, retry_count, claim_token::text FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return row;
}

/** A row claimed by `token` with a lease that expired (`expired`) or is still running. */
async function claimedEvent(
  token: string,
  expired: boolean,
  tenantId: string | null = null,
): Promise<string> {
  const { ids } = await emitMany(t.db, [{ type: 'audit.test', payload: {}, tenantId }]);
  await t.db.execute(
    `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
       retry_count = 2, claim_count = claim_count + 1,
       lease_expires_at = now() + ($3::int * interval '1 minute') WHERE id = $1::uuid`,
    [ids[0], token, expired ? -1 : 10],
  );
  return ids[0]!;
}

async function failedEvent(tenantId: string | null = null): Promise<string> {
  const token = randomUUID();
  const id = await claimedEvent(token, false, tenantId);
  await relayStore(t.db).complete(token, [{ id, kind: 'permanent', error: 'boom', delayMs: 0 }]);
  expect((await outboxRow(id))?.status).toBe('FAILED');
  return id;
}

async function latest(action: string): Promise<AuditEntry> {
  const { items } = await createAuditLog(t.db).list({ action, limit: 1 });
  expect(items).toHaveLength(1);
  return items[0]!;
}

describe('operator audit trail', () => {
  it('outbox retry writes who, scope, reason, ids and per-id outcomes beside the change', async () => {
    const id = await failedEvent('acme');
    const missing = randomUUID();
    const results = await createOutboxAdmin(t.db)
      .forTenant('acme')
      .retryMany([id, missing], { actor: 'ops@example.com', reason: 'broker fixed' });
    expect(results).toEqual([
      { id, outcome: 'applied' },
      { id: missing, outcome: 'not_found' },
    ]);
    expect(await latest('outbox.retry')).toMatchObject({
      actor: 'ops@example.com',
      scope: 'tenant:acme',
      reason: 'broker fixed',
      ids: [id, missing],
      outcome: 'partial',
      results,
      dryRun: false,
    });
  });

  it('the audit row commits or rolls back with the caller transaction', async () => {
    const id = await failedEvent();
    await expect(
      t.db.transaction(async (tx) => {
        await createOutboxAdmin(tx).retry(id, { actor: 'rolled-back' });
        throw new Error('caller aborts');
      }),
    ).rejects.toThrow('caller aborts');
    expect((await outboxRow(id))?.status).toBe('FAILED');
    const { items } = await createAuditLog(t.db).list({ actor: 'rolled-back' });
    expect(items).toEqual([]);
  });

  it('a dry run reports the exact outcome, changes nothing, and is audited as a dry run', async () => {
    const id = await failedEvent();
    const [result] = await createOutboxAdmin(t.db).retryMany([id], { actor: 'ops', dryRun: true });
    expect(result).toEqual({ id, outcome: 'applied' });
    expect((await outboxRow(id))?.status).toBe('FAILED');
    expect(await latest('outbox.retry')).toMatchObject({ ids: [id], outcome: 'applied', dryRun: true });
  });

  it('a dry run inside the caller transaction rolls back only itself; the caller commits its audit row', async () => {
    const id = await failedEvent();
    await t.db.transaction(async (tx) => {
      const [result] = await createOutboxAdmin(tx).retryMany([id], { actor: 'joined', dryRun: true });
      expect(result).toEqual({ id, outcome: 'applied' });
      const [row] = await tx.query<{ status: string }>(
        'SELECT status FROM outbox_events WHERE id = $1::uuid',
        [id],
      );
      expect(row?.status).toBe('FAILED');
    });
    expect((await outboxRow(id))?.status).toBe('FAILED');
    const { items } = await createAuditLog(t.db).list({ actor: 'joined' });
    expect(items.map((e) => [e.action, e.dryRun])).toEqual([['outbox.retry', true]]);
  });

  it('mark-failed records its reason; the default actor is admin-api', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'audit.test', payload: {} }]);
    await createOutboxAdmin(t.db).markFailed(ids[0]!, 'poison');
    expect(await latest('outbox.mark-failed')).toMatchObject({
      actor: 'admin-api',
      scope: 'operator',
      reason: 'poison',
      outcome: 'applied',
    });
  });

  it('inbox requeue is audited; a refused requeue is audited as an error', async () => {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 't1',
      payload: {},
    });
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'DEAD', dead_at = now() WHERE id = $1::uuid`,
      [record.id],
    );
    const scoped = new InboxAdmin(t.prisma).forTenant('t1');
    const input = { id: record.id, expectedVersion: record.rowVersion, actor: 'ops', reason: 'fixed' };
    await scoped.requeue(input);
    expect(await latest('inbox.requeue')).toMatchObject({
      scope: 'tenant:t1',
      ids: [record.id],
      outcome: 'applied',
    });
    await expect(scoped.requeue(input)).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT' });
    expect(await latest('inbox.requeue')).toMatchObject({
      outcome: 'error',
      results: { code: 'FERRY_STATE_CONFLICT' },
    });
  });
  it('inbox replay and purge-payloads are audited with their arguments', async () => {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'rp',
      payload: {},
    });
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = now() - interval '2 days' WHERE id = $1::uuid`,
      [record.id],
    );
    const scoped = new InboxAdmin(t.db).forTenant('rp');
    const requestId = randomUUID();
    const replay = await scoped.replay({
      id: record.id,
      expectedVersion: record.rowVersion,
      requestId,
      targetConsumer: 'work',
      actor: 'ops',
      reason: 'rebuild',
    });
    expect(await latest('inbox.replay')).toMatchObject({
      ids: [record.id],
      outcome: 'applied',
      arguments: { requestId, targetConsumer: 'work' },
      results: [{ id: record.id, outcome: 'accepted', replayId: replay.record.id }],
    });
    const purged = await scoped.purgeCompletedPayload({
      before: new Date(Date.now() - 86_400_000),
      actor: 'ops',
      dryRun: true,
    });
    expect(purged).toEqual({ purged: 1 });
    expect(await latest('inbox.purge-payloads')).toMatchObject({
      dryRun: true,
      results: { purged: 1 },
      actor: 'ops',
    });
    const [row] = await t.db.query<{ payload: unknown }>(
      'SELECT payload FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [record.id],
    );
    expect(row?.payload).toEqual({});
  });
});

describe('release of a dead process claims', () => {
  it('outbox: releases expired claims without spending a retry; a live claim needs --force and its token', async () => {
    const deadToken = randomUUID();
    const liveToken = randomUUID();
    const expired = await claimedEvent(deadToken, true, 'rel');
    const live = await claimedEvent(liveToken, false, 'rel');
    const admin = createOutboxAdmin(t.db).forTenant('rel');

    const dry = await admin.release({ dryRun: true });
    expect(dry.released).toEqual([expired]);
    expect((await outboxRow(expired))?.status).toBe('PROCESSING');

    expect((await admin.release({ actor: 'ops' })).released).toEqual([expired]);
    expect(await outboxRow(expired)).toEqual({ status: 'PENDING', retry_count: 2, claim_token: null });
    expect((await outboxRow(live))?.status).toBe('PROCESSING');

    await expect(admin.release({ force: true })).rejects.toMatchObject({ code: 'FERRY_VALIDATION_FAILED' });
    expect((await admin.release({ claimToken: liveToken, force: true })).released).toEqual([live]);
    expect((await outboxRow(live))?.status).toBe('PENDING');
    // The relay that held the forced claim cannot complete it any more.
    const completed = await relayStore(t.db).complete(liveToken, [
      { id: live, kind: 'sent', error: null, delayMs: 0 },
    ]);
    expect(completed).toEqual([]);
    expect((await outboxRow(live))?.status).toBe('PENDING');
    expect(await latest('outbox.release')).toMatchObject({
      ids: [live],
      arguments: { claimToken: liveToken, force: true },
      results: { released: [live] },
    });
  });

  it('inbox: releases an expired claim and gives its attempt back; other scopes are untouched', async () => {
    const token = randomUUID();
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'r1',
      payload: {},
    });
    const { record: other } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'r2',
      payload: {},
    });
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = $2::uuid, attempts = 1,
         lease_expires_at = now() - interval '1 minute' WHERE id = ANY($1::uuid[])`,
      [[record.id, other.id], token],
    );
    const released = await new InboxAdmin(t.db).forTenant('r1').release({ actor: 'ops' });
    expect(released.released).toEqual([record.id]);
    const rows = await t.db.query<{ id: string; status: string; attempts: number }>(
      'SELECT id::text, status, attempts FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[]) ORDER BY status',
      [[record.id, other.id]],
    );
    expect(rows).toEqual([
      { id: record.id, status: 'PENDING', attempts: 0 },
      { id: other.id, status: 'PROCESSING', attempts: 1 },
    ]);
  });
});
