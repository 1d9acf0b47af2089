import { randomUUID } from 'node:crypto';
import {
  InboxAdmin,
  InboxNotFoundError,
  InboxPermanentError,
  InboxPrivilegedAdmin,
  InboxReplayConflictError,
  InboxStateConflictError,
  FerryError,
  type InboxRecord,
} from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

/**
 * Review 155: the admin clauses of spec/002 probed as a hostile user, public API only: cursors
 * forged or reused, bad page sizes, requeue of every state and version, replay request ids,
 * purge boundaries, odd tenant ids, and no admin verb reaching another tenant's receipt.
 */
describe('review 155: inbox admin under hostile arguments', () => {
  let t: TestDatabase;
  let admin: InboxAdmin;
  let outcome: 'fail' | 'ok' | 'hold' = 'fail';
  let releaseHold: () => void = () => undefined;
  let inbox: ReturnType<typeof makeInbox>;
  beforeAll(async () => {
    t = await createTestDatabase();
    admin = new InboxAdmin(t.prisma);
    inbox = makeInbox(t.prisma, {
      handlers: {
        work: async () => {
          if (outcome === 'fail') throw new InboxPermanentError('broken handler');
          if (outcome === 'hold') await new Promise<void>((resolve) => (releaseHold = resolve));
        },
        'work.rebuild': async () => undefined,
      },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  const tenantName = (label: string): string => `${label}-${randomUUID()}`;

  async function recordIn(status: 'PENDING' | 'DEAD' | 'COMPLETED', tenantId: string): Promise<InboxRecord> {
    const { record } = await inbox.accept(message({ consumer: 'work', tenantId }));
    const tenant = admin.forTenant(tenantId);
    if (status === 'PENDING') return (await tenant.get(record.id))!;
    outcome = status === 'DEAD' ? 'fail' : 'ok';
    for (let i = 0; i < 50 && (await tenant.get(record.id))?.status === 'PENDING'; i += 1)
      await inbox.runOnce();
    outcome = 'fail';
    const stored = await tenant.get(record.id);
    expect(stored?.status).toBe(status);
    return stored!;
  }

  /** A replay request of `record` at its version, to the rebuild consumer, under a new request id. */
  const replayOf = (record: InboxRecord) => ({
    id: record.id,
    expectedVersion: record.rowVersion,
    requestId: randomUUID(),
    targetConsumer: 'work.rebuild',
    actor: 'op',
    reason: 'r',
  });

  const validation = (field: string) =>
    expect.objectContaining({ code: 'FERRY_VALIDATION_FAILED', field }) as unknown;

  it('refuses page sizes 0, negative, non-integer, non-finite, numeric text and past 500 on `limit`', async () => {
    const tenant = admin.forTenant(tenantName('limits'));
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 501, 1e12, '10']) {
      const error = await tenant.list({ limit: limit as number }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FerryError);
      expect(error).toEqual(validation('limit'));
    }
    expect((await tenant.list({ limit: 500 })).records).toEqual([]);
    expect((await tenant.list({ limit: 1 })).nextCursor).toBeNull();
  });

  it('refuses forged cursors and cursors of another tenant, filter or the privileged list', async () => {
    const a = tenantName('cursor-a');
    const b = tenantName('cursor-b');
    for (let i = 0; i < 3; i += 1) {
      await inbox.accept(message({ consumer: 'work', tenantId: a }));
      await inbox.accept(message({ consumer: 'work', tenantId: b }));
    }
    const first = await admin.forTenant(a).list({ limit: 1 });
    const cursor = first.nextCursor!;
    const privileged = new InboxPrivilegedAdmin(t.prisma, { privilegedAdmin: true });
    const privilegedCursor = (await privileged.list({ limit: 1 })).nextCursor!;
    const forged = Buffer.from(JSON.stringify([randomUUID(), 'x'.repeat(22)])).toString('base64url');
    const attempts: Array<Promise<unknown>> = [
      admin.forTenant(b).list({ limit: 1, cursor }),
      admin.forGlobal().list({ limit: 1, cursor }),
      admin.forTenant(a).list({ limit: 1, cursor, status: 'PENDING' }),
      admin.forTenant(a).list({ limit: 1, cursor: privilegedCursor }),
      privileged.list({ limit: 1, cursor }),
      admin.forTenant(a).list({ cursor: forged }),
      admin.forTenant(a).list({ cursor: 'not base64 at all!' }),
      admin.forTenant(a).list({ cursor: '' }),
      admin.forTenant(a).list({ cursor: 42 as unknown as string }),
    ];
    for (const attempt of attempts) {
      expect(await attempt.catch((e: unknown) => e)).toEqual(validation('cursor'));
    }
  });

  it('continues a listing whose cursor row was purged of its payload or completed since', async () => {
    const scope = tenantName('cursor-moved');
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1)
      ids.push((await inbox.accept(message({ consumer: 'work', tenantId: scope }))).record.id);
    const tenant = admin.forTenant(scope);
    const first = await tenant.list({ limit: 2 });
    // The row the cursor points after leaves the status listed; the next page still starts after it.
    outcome = 'ok';
    for (let i = 0; i < 50 && (await tenant.stats()).counts.PENDING > 0; i += 1) await inbox.runOnce();
    outcome = 'fail';
    const rest = await tenant.list({ limit: 2, cursor: first.nextCursor! });
    const seen = [...first.records, ...rest.records].map((r) => r.id);
    expect(new Set(seen).size).toBe(4);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(rest.nextCursor).toBeNull();
  });

  it('refuses expected versions that are not the positive int a row_version is, on `expectedVersion`', async () => {
    const dead = await recordIn('DEAD', tenantName('versions'));
    const tenant = admin.forTenant(dead.tenantId!);
    for (const expectedVersion of [0, -1, 1.5, Number.NaN, 2 ** 31, '1', null]) {
      const error = await tenant
        .requeue({ id: dead.id, expectedVersion: expectedVersion as number, reason: 'r', actor: 'op' })
        .catch((e: unknown) => e);
      expect(error).toEqual(validation('expectedVersion'));
    }
    expect((await tenant.get(dead.id))?.status).toBe('DEAD');
  });

  it('requeues only a DEAD receipt at its observed version: stale, future, PENDING, PROCESSING, COMPLETED conflict', async () => {
    const scope = tenantName('requeue-states');
    const tenant = admin.forTenant(scope);
    const dead = await recordIn('DEAD', scope);
    for (const expectedVersion of [dead.rowVersion - 1, dead.rowVersion + 1, 2 ** 31 - 1]) {
      await expect(
        tenant.requeue({ id: dead.id, expectedVersion, reason: 'r', actor: 'op' }),
      ).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT', actualStatus: 'DEAD' });
    }
    const completed = await recordIn('COMPLETED', scope);
    const pending = await recordIn('PENDING', scope);
    for (const record of [completed, pending]) {
      const error = await tenant
        .requeue({ id: record.id, expectedVersion: record.rowVersion, reason: 'r', actor: 'op' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxStateConflictError);
      expect(error).toMatchObject({ actualStatus: record.status });
    }
    // PROCESSING under a live lease: the worker holds it while its handler runs.
    outcome = 'hold';
    const running = inbox.runOnce();
    await waitUntil(
      'the receipt is claimed',
      async () => (await tenant.get(pending.id))?.status === 'PROCESSING',
      {
        timeoutMs: 20_000,
        intervalMs: 20,
      },
    );
    const claimed = (await tenant.get(pending.id))!;
    await expect(
      tenant.requeue({ id: claimed.id, expectedVersion: claimed.rowVersion, reason: 'r', actor: 'op' }),
    ).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT', actualStatus: 'PROCESSING' });
    outcome = 'ok';
    releaseHold();
    await running;
    outcome = 'fail';
    expect((await tenant.get(pending.id))?.status).toBe('COMPLETED');
  });

  it('applies exactly one of many concurrent requeues of one DEAD receipt', async () => {
    const dead = await recordIn('DEAD', tenantName('requeue-race'));
    const clients = [t.prisma, t.newClient(), t.newClient(), t.newClient()];
    const results = await Promise.allSettled(
      clients.map((client, i) =>
        new InboxAdmin(client)
          .forTenant(dead.tenantId!)
          .requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: `r${i}`, actor: `op${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected'))
      expect(r.reason).toBeInstanceOf(InboxStateConflictError);
    const after = await admin.forTenant(dead.tenantId!).get(dead.id);
    expect(after).toMatchObject({ status: 'PENDING', rowVersion: dead.rowVersion + 1 });
    expect(after?.requeueHistory).toHaveLength(1);
  });

  it('answers a repeated replay request with the same receipt, refuses it for another source, and after purge', async () => {
    const scope = tenantName('replay');
    const tenant = admin.forTenant(scope);
    const source = await recordIn('COMPLETED', scope);
    const other = await recordIn('COMPLETED', scope);
    const request = replayOf(source);
    const { requestId } = request;
    const accepted = await tenant.replay(request);
    expect(accepted.kind).toBe('accepted');
    const again = await tenant.replay({ ...request, requestId: requestId.toUpperCase(), actor: 'op-2' });
    expect(again).toMatchObject({ kind: 'duplicate', record: { id: accepted.record.id } });
    const conflict = await tenant
      .replay({ ...request, id: other.id, expectedVersion: other.rowVersion })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(InboxReplayConflictError);
    expect(conflict).toMatchObject({ code: expect.any(String) });
    expect((await tenant.stats()).total).toBe(3);
    // Purge the sources: the same request still answers its receipt; a new one is refused.
    const purged = await tenant.purgeCompletedPayload({ before: new Date(Date.now() + 60_000), limit: 10 });
    expect(purged.purged).toBe(2);
    expect(await tenant.replay(request)).toMatchObject({
      kind: 'duplicate',
      record: { id: accepted.record.id },
    });
    const fresh = (await tenant.get(other.id))!;
    await expect(
      tenant.replay({ ...request, id: fresh.id, expectedVersion: fresh.rowVersion, requestId: randomUUID() }),
    ).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT', actualStatus: 'COMPLETED' });
    expect((await tenant.stats()).total).toBe(3);
  });

  it('purges only payloads completed strictly before `before`, at most `limit`, and refuses bad bounds', async () => {
    const scope = tenantName('purge');
    const tenant = admin.forTenant(scope);
    const done = [await recordIn('COMPLETED', scope), await recordIn('COMPLETED', scope)];
    const dead = await recordIn('DEAD', scope);
    const pending = await recordIn('PENDING', scope);
    const earliest = done.map((r) => r.completedAt!.getTime()).sort((x, y) => x - y)[0]!;
    expect((await tenant.purgeCompletedPayload({ before: new Date(earliest) })).purged).toBe(0);
    expect((await tenant.purgeCompletedPayload({ before: new Date(earliest + 1), limit: 1 })).purged).toBe(1);
    for (const limit of [0, -1, 1.5, 10_001]) {
      await expect(tenant.purgeCompletedPayload({ before: new Date(), limit })).rejects.toEqual(
        validation('limit'),
      );
    }
    await expect(tenant.purgeCompletedPayload({ before: new Date(Number.NaN) })).rejects.toEqual(
      validation('before'),
    );
    await expect(tenant.purgeCompletedPayload({ before: '2026-01-01' as unknown as Date })).rejects.toEqual(
      validation('before'),
    );
    expect((await tenant.purgeCompletedPayload({ before: new Date(Date.now() + 60_000) })).purged).toBe(1);
    expect((await tenant.get(dead.id))?.payload).toEqual(dead.payload);
    expect((await tenant.get(pending.id))?.payload).toEqual(pending.payload);
    // Deduplication survives: the same message is a duplicate, not a new receipt.
    const again = await inbox.accept(
      message({
        consumer: 'work',
        tenantId: scope,
        messageId: done[0]!.messageId,
        payload: done[0]!.payload,
      }),
    );
    expect(again.record.id).toBe(done[0]!.id);
  });

  it('refuses tenant ids that are empty, too long or hold NUL, and keeps a unicode tenant its own scope', async () => {
    for (const tenantId of ['', 'x'.repeat(256), 'a\u0000b', undefined, null, 42]) {
      expect(() => admin.forTenant(tenantId as string)).toThrow(
        expect.objectContaining({ code: 'FERRY_VALIDATION_FAILED', field: 'tenantId' }) as Error,
      );
    }
    const unicode = `テナント-${randomUUID()}-😀`;
    const record = await recordIn('PENDING', unicode);
    expect(await admin.forTenant(unicode).get(record.id)).toMatchObject({ tenantId: unicode });
    expect(await admin.forTenant(unicode.normalize('NFD') + ' ').get(record.id)).toBeNull();
    expect(admin.forTenant('x'.repeat(255)).scope).toBeDefined();
  });

  it("never lets one tenant reach another's receipt through any admin verb", async () => {
    const owner = tenantName('owner');
    const intruder = admin.forTenant(tenantName('intruder'));
    const dead = await recordIn('DEAD', owner);
    const completed = await recordIn('COMPLETED', owner);
    expect(await intruder.get(dead.id)).toBeNull();
    expect(await admin.forGlobal().get(dead.id)).toBeNull();
    expect((await intruder.list({ limit: 500 })).records).toEqual([]);
    await expect(
      intruder.requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: 'r', actor: 'op' }),
    ).rejects.toBeInstanceOf(InboxNotFoundError);
    await expect(intruder.replay(replayOf(completed))).rejects.toBeInstanceOf(InboxNotFoundError);
    expect((await intruder.purgeCompletedPayload({ before: new Date(Date.now() + 60_000) })).purged).toBe(0);
    expect((await admin.forTenant(owner).get(completed.id))?.payload).toEqual(completed.payload);
    expect(await intruder.stats()).toMatchObject({ total: 0 });
  });

  it('refuses hostile actor, reason, request id and target consumer before any SQL, changing nothing', async () => {
    const scope = tenantName('texts');
    const tenant = admin.forTenant(scope);
    const dead = await recordIn('DEAD', scope);
    const completed = await recordIn('COMPLETED', scope);
    const requeue = { id: dead.id, expectedVersion: dead.rowVersion, reason: 'r', actor: 'op' };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['actor', { actor: 'a\u0000b' }],
      ['actor', { actor: '' }],
      ['reason', { reason: 'x'.repeat(1_001) }],
      ['reason', { reason: '\ud800' }],
      ['id', { id: 'not-a-uuid' }],
      ['dryRun', { dryRun: 'yes' }],
    ];
    for (const [field, change] of cases) {
      await expect(tenant.requeue({ ...requeue, ...change } as never)).rejects.toEqual(validation(field));
    }
    const replay = replayOf(completed);
    const replayCases: Array<[string, Record<string, unknown>]> = [
      ['requestId', { requestId: 'request-1' }],
      ['targetConsumer', { targetConsumer: '' }],
      ['targetConsumer', { targetConsumer: 'a\u0000b' }],
      ['targetConsumer', { targetConsumer: 'x'.repeat(10_000) }],
      ['actor', { actor: 'a\u0000b' }],
    ];
    for (const [field, change] of replayCases) {
      await expect(tenant.replay({ ...replay, ...change } as never)).rejects.toEqual(validation(field));
    }
    expect(await tenant.get(dead.id)).toEqual(dead);
    expect((await tenant.stats()).total).toBe(2);
  });

  it('dry runs of requeue and replay report the outcome and change nothing; the real action still applies', async () => {
    const scope = tenantName('dry');
    const tenant = admin.forTenant(scope);
    const dead = await recordIn('DEAD', scope);
    const completed = await recordIn('COMPLETED', scope);
    const requeue = { id: dead.id, expectedVersion: dead.rowVersion, reason: 'r', actor: 'op' };
    expect(await tenant.requeue({ ...requeue, dryRun: true })).toMatchObject({ status: 'PENDING' });
    expect(await tenant.get(dead.id)).toEqual(dead);
    expect(await tenant.requeue(requeue)).toMatchObject({
      status: 'PENDING',
      rowVersion: dead.rowVersion + 1,
    });
    const replay = replayOf(completed);
    expect(await tenant.replay({ ...replay, dryRun: true })).toMatchObject({ kind: 'accepted' });
    expect((await tenant.stats()).total).toBe(2);
    const real = await tenant.replay(replay);
    expect(real.kind).toBe('accepted');
    expect((await tenant.stats()).total).toBe(3);
    // The source keeps its completion, identity and version.
    expect(await tenant.get(completed.id)).toEqual(completed);
    expect(real.record).toMatchObject({
      status: 'PENDING',
      consumer: 'work.rebuild',
      tenantId: scope,
      payload: completed.payload,
      replay: { sourceId: completed.id, sourceVersion: completed.rowVersion, requestId: replay.requestId },
    });
  });

  it('privileged admin: refused unless enabled with true, reads every scope, mutates only through the record scope', async () => {
    for (const privilegedAdmin of [undefined, false, 'true', 1]) {
      expect(() => new InboxPrivilegedAdmin(t.prisma, { privilegedAdmin } as never)).toThrow(
        expect.objectContaining({ code: 'FERRY_CONFIG_INVALID' }) as Error,
      );
    }
    const privileged = new InboxPrivilegedAdmin(t.prisma, { privilegedAdmin: true });
    const scope = tenantName('privileged');
    const dead = await recordIn('DEAD', scope);
    expect(await privileged.get(dead.id)).toEqual(dead);
    expect(await privileged.get('nope')).toBeNull();
    const scoped = privileged.scopeOf(dead);
    expect(scoped.scope).toBe(admin.forTenant(scope).scope);
    await expect(
      privileged.scopeOf({ tenantId: tenantName('wrong') }).requeue({
        id: dead.id,
        expectedVersion: dead.rowVersion,
        reason: 'r',
        actor: 'op',
      }),
    ).rejects.toBeInstanceOf(InboxNotFoundError);
    expect(() => privileged.scopeOf({ tenantId: '' })).toThrow(
      expect.objectContaining({ code: 'FERRY_VALIDATION_FAILED' }) as Error,
    );
    expect(
      await scoped.requeue({ id: dead.id, expectedVersion: dead.rowVersion, reason: 'r', actor: 'op' }),
    ).toMatchObject({ status: 'PENDING' });
  });

  it('answers statistics of an empty scope with zero counts and no oldest pending work', async () => {
    const stats = await admin.forTenant(tenantName('empty')).stats();
    expect(stats).toMatchObject({
      counts: { PENDING: 0, PROCESSING: 0, RETRYABLE: 0, COMPLETED: 0, DEAD: 0 },
      total: 0,
      oldestPendingAt: null,
      oldestPendingAgeMs: null,
      expiredLeases: 0,
    });
  });
});
