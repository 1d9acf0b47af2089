import { Inbox, InboxAdmin, type InboxRecord } from '@ferry/core';
import pino from 'pino';
import { holdConnection, liveTimers } from '../../../test-support/holds';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  drainInbox,
  InboxDrainTimeoutError,
  InboxRecordWaitTimeoutError,
  waitForInboxRecord,
} from '../src/inbox';

describe('@ferry/testing inbox helpers', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('drains due work and waits for a record state', async () => {
    let fail = true;
    const inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      worker: { retryBaseMs: 1, retryMaxMs: 1, maxAttempts: 2 },
      handlers: {
        ok: async () => undefined,
        flaky: async () => (fail ? Promise.reject(new Error('no')) : undefined),
      },
    });
    const a = await inbox.accept({ consumer: 'ok', messageId: 'a', tenantId: 't1', payload: { a: 1 } });
    const b = await inbox.accept({ consumer: 'flaky', messageId: 'b', tenantId: 't1', payload: { b: 1 } });
    const drained = await drainInbox(inbox);
    expect(drained.completed).toBeGreaterThanOrEqual(1);
    const scope = new InboxAdmin(t.prisma).forTenant('t1');
    expect(await waitForInboxRecord(scope, a.record.id)).toMatchObject({ status: 'COMPLETED' });
    await drainInbox(inbox);
    expect(await waitForInboxRecord(scope, b.record.id, { status: 'DEAD', timeoutMs: 5_000 })).toMatchObject({
      attempts: 2,
    });
    fail = false;
    // Long enough for a get(id) to answer on a loaded machine (at 50 ms a CI rehearsal saw none:
    // `last` null); the record stays DEAD, so the wait for COMPLETED ends at its deadline anyway.
    const error = await waitForInboxRecord(scope, b.record.id, { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InboxRecordWaitTimeoutError);
    expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', last: { status: 'DEAD' } });
    expect((error as Error).message).toContain('DEAD');
  });

  it('reports a drain that never ends with a typed error', async () => {
    const endless = {
      runOnce: async () => ({ claimed: 1, completed: 1, retried: 0, dead: 0, leaseLost: 0, unresolved: 0 }),
    };
    await expect(drainInbox(endless, { maxRounds: 3 })).rejects.toBeInstanceOf(InboxDrainTimeoutError);
  });

  it('fails at its deadline when a runOnce() call never settles, saying so', async () => {
    // The earlier cases' last statements settle first (a pooled connection released then starts
    // its idle timer, which CI once counted as drainInbox's).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = liveTimers();
    const hanging = { runOnce: () => new Promise<never>(() => undefined) };
    const error: unknown = await drainInbox(hanging, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InboxDrainTimeoutError);
    expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', rounds: 0, processed: 0 });
    expect((error as Error).message).toBe(
      'drainInbox: inbox.runOnce() (round 1) had not settled after 50 ms (0 receipts processed)',
    );
    expect(liveTimers()).toBeLessThanOrEqual(before);
  });

  it('fails at its deadline when the database does not answer get(id), saying so', async () => {
    const inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      handlers: { ok: async () => undefined },
    });
    const { record } = await inbox.accept({ consumer: 'ok', messageId: 'held', tenantId: 't2', payload: {} });
    // The admin's only connection is held: its get(id) waits (up to the admin's own 30 s deadline).
    const client = t.newClient({ max: 1 });
    const scope = new InboxAdmin(client).forTenant('t2');
    expect((await scope.get(record.id))?.status).toBe('PENDING');
    const held = await holdConnection(client, 30_000);
    try {
      const error: unknown = await waitForInboxRecord(scope, record.id, { timeoutMs: 200 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InboxRecordWaitTimeoutError);
      expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', last: null });
      expect((error as Error).message).toBe(
        `waitForInboxRecord: record ${record.id} did not reach COMPLETED: get(id) had not settled after 200 ms; last seen nothing`,
      );
    } finally {
      await held.release();
    }
  });

  it('reports the last record seen when a later get(id) never settles', async () => {
    const seen = { id: 'r-1', status: 'PENDING', attempts: 0, lastError: null } as unknown as InboxRecord;
    let calls = 0;
    const scope = {
      get: (): Promise<InboxRecord | null> =>
        ++calls === 1 ? Promise.resolve(seen) : new Promise(() => undefined),
    };
    const error: unknown = await waitForInboxRecord(scope, 'r-1', { timeoutMs: 50, intervalMs: 1 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ last: seen });
    expect((error as Error).message).toContain('get(id) had not settled after 50 ms; last seen PENDING');
  });
});
