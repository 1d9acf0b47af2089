import { randomUUID } from 'node:crypto';
import { InboxAdmin, InboxPermanentError, type InboxRecord } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { latch, makeInbox, message, waitFor } from './inbox/helpers';

/**
 * Review 117 (spec/002, "Retain deduplication while cleaning payloads"): cleanup removes eligible
 * COMPLETED payloads only, "leaves PENDING, PROCESSING, RETRYABLE, and DEAD payloads intact",
 * preserves identity, fingerprint and replay lineage, and acts in the admin's scope only
 * (forTenant: that tenant; forGlobal: intentional global records, not every tenant).
 */
describe('review 117: purgeCompletedPayload by status and scope', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('purges COMPLETED payloads only, leaving PENDING, PROCESSING, RETRYABLE and DEAD payloads intact', async () => {
    const tenantId = `t-${randomUUID()}`;
    const held = latch();
    const started = latch();
    const inbox = makeInbox(t.prisma, {
      // RETRYABLE stays RETRYABLE for the test's lifetime.
      worker: { retryBaseMs: 600_000, retryMaxMs: 600_000 },
      handlers: {
        ok: async () => undefined,
        retry: async () => Promise.reject(new Error('try again')),
        dead: async () => Promise.reject(new InboxPermanentError('never')),
        hold: async () => {
          started.open();
          await held.promise;
        },
        later: async () => undefined,
      },
    });
    const accepted: Record<string, InboxRecord> = {};
    for (const consumer of ['ok', 'retry', 'dead'])
      accepted[consumer] = (await inbox.accept(message({ consumer, tenantId }))).record;
    expect(await inbox.runOnce()).toMatchObject({ claimed: 3, completed: 1, dead: 1 });
    accepted.hold = (await inbox.accept(message({ consumer: 'hold', tenantId }))).record;
    const running = inbox.runOnce();
    await started.promise;
    // accepted after the run began: no lane claims it before the purge
    accepted.later = (await inbox.accept(message({ consumer: 'later', tenantId }))).record;

    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    const before = new Date(Date.now() + 3_600_000);
    const statuses = Object.fromEntries(
      await Promise.all(
        Object.entries(accepted).map(async ([name, r]) => [name, (await admin.get(r.id))?.status]),
      ),
    );
    expect(statuses).toEqual({
      ok: 'COMPLETED',
      retry: 'RETRYABLE',
      dead: 'DEAD',
      hold: 'PROCESSING',
      later: 'PENDING',
    });
    expect(await admin.purgeCompletedPayload({ before, limit: 100 })).toEqual({ purged: 1 });
    held.open();
    await running;

    for (const [name, r] of Object.entries(accepted)) {
      const now = (await admin.get(r.id))!;
      expect({ name, id: now.id, messageId: now.messageId, fingerprint: now.payloadFingerprint }).toEqual({
        name,
        id: r.id,
        messageId: r.messageId,
        fingerprint: r.payloadFingerprint,
      });
      if (name === 'ok') {
        expect(now.payload).toBeNull();
        expect(now.payloadPurgedAt).toBeInstanceOf(Date);
      } else {
        expect({ name, payload: now.payload }).toEqual({ name, payload: r.payload });
        expect(now.payloadPurgedAt).toBeNull();
      }
    }
  });

  it('purges in its own scope only: a tenant not its neighbours nor global, forGlobal not every tenant', async () => {
    const a = `a-${randomUUID()}`;
    const b = `b-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, { global: 'shared', handlers: { done: async () => undefined } });
    const inA = (await inbox.accept(message({ consumer: 'done', tenantId: a }))).record;
    const inB = (await inbox.accept(message({ consumer: 'done', tenantId: b }))).record;
    const global = (await inbox.accept(message({ consumer: 'done', tenantId: null }))).record;
    await waitFor('all three completed', async () => {
      await inbox.runOnce();
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[]) AND status = 'COMPLETED'`,
        [[inA.id, inB.id, global.id]],
      );
      return row?.n === 3;
    });
    const admin = new InboxAdmin(t.prisma);
    const before = new Date(Date.now() + 3_600_000);
    const payloadOf = async (r: InboxRecord) =>
      (await admin[r.tenantId === null ? 'forGlobal' : 'forTenant'](r.tenantId as string).get(r.id))?.payload;

    expect(await admin.forTenant(a).purgeCompletedPayload({ before })).toEqual({ purged: 1 });
    expect(await payloadOf(inA)).toBeNull();
    expect(await payloadOf(inB)).toEqual(inB.payload);
    expect(await payloadOf(global)).toEqual(global.payload);

    await admin.forGlobal().purgeCompletedPayload({ before, limit: 10_000 });
    expect(await payloadOf(global)).toBeNull();
    expect(await payloadOf(inB)).toEqual(inB.payload);
  });

  it("keeps a replay receipt's lineage, identity and fingerprint when its own payload is purged", async () => {
    const tenantId = `t-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, {
      handlers: { orders: async () => undefined, 'orders.rebuild': async () => undefined },
    });
    const source = (await inbox.accept(message({ consumer: 'orders', tenantId }))).record;
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
    await waitFor('source completed', async () => {
      await inbox.runOnce();
      return (await admin.get(source.id))?.status === 'COMPLETED';
    });
    const completed = (await admin.get(source.id))!;
    const request = {
      id: source.id,
      expectedVersion: completed.rowVersion,
      requestId: randomUUID(),
      targetConsumer: 'orders.rebuild',
      actor: 'op-117',
      reason: 'rebuild',
    };
    const { record: replay } = await admin.replay(request);
    await waitFor('replay completed', async () => {
      await inbox.runOnce();
      return (await admin.get(replay.id))?.status === 'COMPLETED';
    });
    expect(await admin.purgeCompletedPayload({ before: new Date(Date.now() + 3_600_000) })).toEqual({
      purged: 2,
    });
    const after = (await admin.get(replay.id))!;
    expect(after).toMatchObject({
      id: replay.id,
      messageId: replay.messageId,
      consumer: 'orders.rebuild',
      tenantId,
      payload: null,
      payloadFingerprint: source.payloadFingerprint,
      replay: replay.replay,
    });
    expect(after.replay).toMatchObject({
      sourceId: source.id,
      sourceVersion: completed.rowVersion,
      requestId: request.requestId,
      actor: 'op-117',
      reason: 'rebuild',
      requestedAt: expect.any(Date),
    });
    // the same request after cleanup: its existing receipt, lineage intact
    expect(await admin.replay(request)).toMatchObject({
      kind: 'duplicate',
      record: { id: replay.id, replay: replay.replay },
    });
  });
});
