import { Pool, type PoolClient } from 'pg';
import { Inbox, pgTransactions } from '@ferry/core';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { latch, message, recorder, waitFor, FAST_WORKER } from '../inbox/helpers';

jest.setTimeout(120_000);
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('pool ended while a handler transaction is mid-flight and the worker claims', async () => {
  const pool = new Pool({ connectionString: t.url, max: 4 });
  pool.on('error', () => undefined);
  const gate = latch();
  const started = latch();
  let kept: PoolClient | undefined;
  const { events, observer } = recorder();
  const inbox = new Inbox(pgTransactions(pool), {
    logger: pino({ level: 'silent' }),
    observer,
    global: 'shared',
    worker: { ...FAST_WORKER, concurrency: 2 },
    handlers: {
      p: async (_payload, context) => {
        kept = context.tx;
        await context.tx.query('SELECT 1');
        started.open();
        await gate.promise;
        await context.tx.query('SELECT 2');
      },
    },
  });
  const { record: { id } } = await inbox.accept(message({ consumer: 'p', tenantId: null }));
  inbox.start();
  await started.promise;
  const ending = pool.end();
  await new Promise((r) => setTimeout(r, 300));
  gate.open();
  await ending;
  await new Promise((r) => setTimeout(r, 500));
  const [row] = await t.db.query<{ status: string; last_error: string | null }>(
    'SELECT status, last_error FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  console.log('row', row, events.map((e) => `${e.type}:${'operation' in e ? e.operation : ''}:${'error' in e ? e.error : ''}`).slice(0, 12));
  // The lent client after the transaction.
  const late = await kept!.query('SELECT 3').catch((e: unknown) => e);
  const rel = (() => { try { kept!.release(); return 'released'; } catch (e) { return e; } })();
  const rel2 = (() => { try { kept!.release(); return 'released'; } catch (e) { return e; } })();
  const end = await kept!.end().catch((e: unknown) => e);
  console.log('late', String(late), String(rel), String(rel2), String(end));
  const t0 = Date.now();
  await inbox.close();
  console.log('close took', Date.now() - t0);
});
