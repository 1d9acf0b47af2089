import { randomUUID } from 'node:crypto';
import { FerryError, InboxAdmin, InboxPrivilegedAdmin, type InboxEvent } from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, recorder } from './helpers';

/**
 * Review 155: initialize / runOnce / close as a user drives them beside a running worker, and
 * the observer's outcome events, public API only.
 */
describe('review 155: inbox lifecycle under hostile use', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('answers statistics of a table that holds no receipt at all with zeros, in every scope', async () => {
    const fresh = await createTestDatabase();
    try {
      const zero = {
        counts: { PENDING: 0, PROCESSING: 0, RETRYABLE: 0, COMPLETED: 0, DEAD: 0 },
        total: 0,
        completedEstimated: false,
        oldestPendingAt: null,
        oldestPendingAgeMs: null,
        expiredLeases: 0,
      };
      expect(await new InboxPrivilegedAdmin(fresh.prisma, { privilegedAdmin: true }).stats()).toEqual(zero);
      expect(await new InboxAdmin(fresh.prisma).forGlobal().stats()).toEqual(zero);
      expect(await new InboxAdmin(fresh.prisma).forTenant('acme').list()).toEqual({
        records: [],
        nextCursor: null,
      });
    } finally {
      await fresh.drop();
    }
  });

  it('answers runOnce(), accept() and every admin verb on a database without the schema with a typed error', async () => {
    const bare = await createTestDatabase({ migrate: false });
    try {
      const inbox = makeInbox(bare.prisma, { handlers: { work: async () => undefined } });
      const tenant = new InboxAdmin(bare.prisma).forTenant('acme');
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['runOnce', () => inbox.runOnce()],
        ['accept', () => inbox.accept(message({ consumer: 'work' }))],
        ['list', () => tenant.list()],
        ['get', () => tenant.get(randomUUID())],
        ['stats', () => tenant.stats()],
        ['requeue', () => tenant.requeue({ id: randomUUID(), expectedVersion: 1, reason: 'r', actor: 'op' })],
        ['purge', () => tenant.purgeCompletedPayload({ before: new Date() })],
      ];
      for (const [name, call] of calls) {
        const error = await call().then(
          () => 'resolved',
          (e: unknown) => e,
        );
        expect({ name, typed: error instanceof FerryError }).toEqual({ name, typed: true });
      }
      await inbox.close();
    } finally {
      await bare.drop();
    }
  });

  it('runs each receipt once when runOnce() is called while the started worker polls', async () => {
    const tenant = `overlap-${randomUUID()}`;
    const runs = new Map<string, number>();
    const inbox = makeInbox(t.prisma, {
      worker: { concurrency: 3 },
      handlers: { work: async (_p, c) => void runs.set(c.receiptId, (runs.get(c.receiptId) ?? 0) + 1) },
    });
    const ids = [];
    for (let i = 0; i < 20; i += 1)
      ids.push((await inbox.accept(message({ consumer: 'work', tenantId: tenant }))).record.id);
    inbox.start();
    const results = await Promise.all([inbox.runOnce(), inbox.runOnce(), inbox.runOnce()]);
    for (const result of results) expect(result.claimed).toBeLessThanOrEqual(3);
    const admin = new InboxAdmin(t.prisma).forTenant(tenant);
    await waitUntil('every receipt completed', async () => (await admin.stats()).counts.COMPLETED === 20, {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
    await inbox.close();
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('close() twice and during runOnce() resolves both, lets the handler finish, and refuses later runOnce()', async () => {
    const tenant = `closing-${randomUUID()}`;
    let release: () => void = () => undefined;
    let started = false;
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 20_000 },
      handlers: {
        work: async () => {
          started = true;
          await new Promise<void>((resolve) => (release = resolve));
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'work', tenantId: tenant }));
    const running = inbox.runOnce();
    await waitUntil('the handler started', () => started, { timeoutMs: 20_000, intervalMs: 10 });
    const first = inbox.close();
    const second = inbox.close();
    expect(inbox.state).toBe('closing');
    await expect(inbox.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    await expect(inbox.initialize()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    release();
    await expect(running).resolves.toMatchObject({ claimed: 1, completed: 1 });
    await Promise.all([first, second, inbox.close()]);
    expect(inbox.state).toBe('closed');
    expect(await new InboxAdmin(t.prisma).forTenant(tenant).get(record.id)).toMatchObject({
      status: 'COMPLETED',
    });
  });

  it('observes accepted, duplicate, completed, retry and dead, with redacted error text', async () => {
    const { events, observer } = recorder();
    const secret = 'postgres://user:hunter2@db.internal:5432/app';
    let fail = 0;
    const inbox = makeInbox(t.prisma, {
      observer,
      worker: { maxAttempts: 2 },
      handlers: {
        work: async () => {
          fail += 1;
          throw new Error(`cannot reach ${secret}`);
        },
        fine: async () => undefined,
      },
    });
    const tenant = `observe-${randomUUID()}`;
    const failing = message({ consumer: 'work', tenantId: tenant });
    await inbox.accept(failing);
    await inbox.accept(failing);
    await inbox.accept(message({ consumer: 'fine', tenantId: tenant }));
    for (let i = 0; i < 20 && !events.some((e) => e.type === 'dead'); i += 1) await inbox.runOnce();
    const types = events.map((e: InboxEvent) => e.type);
    for (const type of ['accepted', 'duplicate', 'completed', 'retry', 'dead']) expect(types).toContain(type);
    expect(fail).toBe(2);
    expect(JSON.stringify(events)).not.toContain('hunter2');
    const admin = new InboxAdmin(t.prisma).forTenant(tenant);
    const [dead] = (await admin.list({ status: 'DEAD' })).records;
    expect(dead?.lastError ?? '').not.toContain('hunter2');
  });
});
