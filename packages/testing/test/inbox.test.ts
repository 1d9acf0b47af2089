import { Inbox, InboxAdmin } from '@ferry/core';
import pino from 'pino';
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
    const error = await waitForInboxRecord(scope, b.record.id, { timeoutMs: 50 }).catch((e: unknown) => e);
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
});
