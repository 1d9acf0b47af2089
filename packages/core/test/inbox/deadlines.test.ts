import { fromPrisma, type InboxHandlerContext, type InboxHandlerContextWrapper } from '@ferry/core';
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  insertBusiness,
  makeInbox,
  message,
  receiptRow,
  waitFor,
} from './helpers';

function aborted(context: InboxHandlerContext): Promise<unknown> {
  return new Promise((resolve) => {
    if (context.signal.aborted) resolve(context.signal.reason);
    context.signal.addEventListener('abort', () => resolve(context.signal.reason), { once: true });
  });
}

describe('inbox handler transaction bounds', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
    await t.db.execute('CREATE TABLE lock_target (id int PRIMARY KEY, n int NOT NULL)');
    await t.db.execute('INSERT INTO lock_target VALUES (1, 0)');
  });
  afterAll(async () => {
    await t.drop();
  });

  it('bounds lock waits in the handler transaction by lockTimeoutMs and retries the receipt', async () => {
    const holder = listened(new Client({ connectionString: t.url }));
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT * FROM lock_target WHERE id = 1 FOR UPDATE');
    const settings: string[] = [];
    try {
      const inbox = makeInbox(t.prisma, {
        worker: {
          lockTimeoutMs: 50,
          transactionTimeoutMs: 60_000,
          leaseMs: 120_000,
          heartbeatIntervalMs: 1_000,
        },
        handlers: {
          'c-locked': async (_p, context) => {
            const db = fromPrisma(context.tx);
            const [row] = await db.query<{ v: string }>(`SELECT current_setting('lock_timeout') AS v`);
            settings.push(row?.v ?? '');
            await insertBusiness(context);
            await db.execute('UPDATE lock_target SET n = n + 1 WHERE id = 1');
          },
        },
      });
      const { record } = await inbox.accept(message({ consumer: 'c-locked' }));
      expect(await inbox.runOnce()).toMatchObject({ retried: 1, completed: 0 });
      expect(settings).toEqual(['50ms']);
      const row = await receiptRow(t, record.id);
      expect(row.status).toBe('RETRYABLE');
      expect(row.last_error).toContain('lock timeout');
      expect(await businessCount(t, record.id)).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const [{ v } = { v: '' }] = await t.prisma.$queryRawUnsafe<Array<{ v: string }>>(
      `SELECT current_setting('lock_timeout') AS v`,
    );
    expect(v).toBe('0');
  });

  it('aborts the handler signal at transactionTimeoutMs with FERRY_TIMEOUT and rolls its writes back', async () => {
    const reasons: unknown[] = [];
    const inbox = makeInbox(t.prisma, {
      worker: { transactionTimeoutMs: 300 },
      handlers: {
        'c-slow': async (_p, context) => {
          await insertBusiness(context);
          const reason = await aborted(context);
          reasons.push(reason);
          throw reason;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-slow' }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
    expect(reasons).toEqual([expect.objectContaining({ code: 'FERRY_TIMEOUT' })]);
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'RETRYABLE', attempts: 1 });
    expect((await receiptRow(t, record.id)).last_error).toContain('FERRY_TIMEOUT');
    expect(await businessCount(t, record.id)).toBe(0);
  });

  it('does not complete a handler that ignores the deadline and returns normally after it', async () => {
    const inbox = makeInbox(t.prisma, {
      worker: { transactionTimeoutMs: 300 },
      handlers: {
        'c-ignores': async (_p, context) => {
          await insertBusiness(context);
          await aborted(context);
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-ignores' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0 });
    const row = await receiptRow(t, record.id);
    expect(row.status).not.toBe('COMPLETED');
    expect(await businessCount(t, record.id)).toBe(0);
  });

  it('ends a Prisma handler statement that outlasts transactionTimeoutMs: its locks go with it, the receipt is retried', async () => {
    // The row stays locked by `holder` until the test ends: the handler's statement waits on it
    // (lockTimeoutMs far above the transaction's limit), so only transactionTimeoutMs can end it.
    const holder = listened(new Client({ connectionString: t.url }));
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT * FROM lock_target WHERE id = 1 FOR UPDATE');
    let first: unknown;
    try {
      const inbox = makeInbox(t.prisma, {
        worker: {
          transactionTimeoutMs: 300,
          lockTimeoutMs: 600_000,
          leaseMs: 120_000,
          heartbeatIntervalMs: 1_000,
        },
        handlers: {
          'c-long-statement': async (_p, context) => {
            await insertBusiness(context);
            await fromPrisma(context.tx).execute('UPDATE lock_target SET n = n + 1 WHERE id = 1');
          },
        },
      });
      const { record } = await inbox.accept(message({ consumer: 'c-long-statement' }));
      void inbox.runOnce().then(
        (result) => (first = result),
        (error: unknown) => (first = error),
      );
      await waitFor(
        'the handler transaction to end while the row is still locked',
        async () => first,
        10_000,
      );
      expect(first).toMatchObject({ retried: 1, completed: 0 });
      const row = await receiptRow(t, record.id);
      expect(row.status).toBe('RETRYABLE');
      expect(row.last_error).toContain('statement timeout');
      expect(await businessCount(t, record.id)).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const [{ v } = { v: '' }] = await t.prisma.$queryRawUnsafe<Array<{ v: string }>>(
      `SELECT current_setting('statement_timeout') AS v`,
    );
    expect(v).toBe('0');
  });

  it('refuses a wrapper that starts the handler after the signal aborted: the handler never runs', async () => {
    let calls = 0;
    const late: InboxHandlerContextWrapper = async (context, next) => {
      await aborted(context);
      await next();
    };
    const inbox = makeInbox(t.prisma, {
      worker: { transactionTimeoutMs: 300 },
      handlerContext: late,
      handlers: {
        'c-cancelled': async () => {
          calls += 1;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-cancelled' }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1, completed: 0 });
    expect(calls).toBe(0);
    const row = await receiptRow(t, record.id);
    expect(row.status).toBe('RETRYABLE');
    expect(row.last_error).toContain('FERRY_WRAPPER_MISUSE');
    expect(row.last_error).toContain('started canceled work');
  });
});
