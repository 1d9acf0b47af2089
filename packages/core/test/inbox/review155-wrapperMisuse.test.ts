/**
 * Review 155: spec/002, "Custom handlerContext(context, next) wrappers must invoke and await
 * next() exactly once. Skipping or repeating it, swallowing a handler failure, or starting
 * canceled work cannot produce successful completion." Probed with the misuse a careless
 * wrapper writes: a `next()` it does not await nor catch, a second call it drops, a call it makes
 * after it returned. Each must fail the receipt (FERRY_WRAPPER_MISUSE), never run the handler
 * after the wrapper's attempt ended, and never leave an unhandled rejection behind (Node's default
 * `--unhandled-rejections=throw` ends the application's process, again for each redelivery).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { type InboxHandlerContextWrapper } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { failOnUnhandledRejections } from '../../../../test-support/lifecycle';
import { makeInbox, message, receiptRow } from './helpers';

failOnUnhandledRejections();

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

let consumerSeq = 0;
async function runWith(wrapper: InboxHandlerContextWrapper, handlerFails: boolean) {
  let calls = 0;
  consumerSeq += 1;
  const consumer = `misuse-${consumerSeq}`;
  const inbox = makeInbox(t.prisma, {
    handlerContext: wrapper,
    handlers: {
      [consumer]: async () => {
        calls += 1;
        if (handlerFails) throw new Error('handler failed');
      },
    },
  });
  const { record } = await inbox.accept(message({ consumer }));
  await inbox.runOnce();
  // Lets the rejections of this turn reach Node's unhandled-rejection check before the test ends.
  await new Promise((resolve) => setImmediate(resolve));
  return { row: await receiptRow(t, record.id), calls: () => calls };
}

it.each<[string, InboxHandlerContextWrapper, boolean]>([
  ['drops a next() whose handler fails', async (_c, next) => void next(), true],
  [
    'drops its second call of next()',
    async (_c, next) => {
      await next();
      void next();
    },
    false,
  ],
])('a wrapper that %s fails the receipt and leaves no unhandled rejection', async (_name, wrapper, fails) => {
  const { row } = await runWith(wrapper, fails);
  expect(row.status).toBe('RETRYABLE');
  expect(row.last_error).toContain('FERRY_WRAPPER_MISUSE');
});

/**
 * An application process (plain Node, @ferry/core as installed): an outer wrapper drops next()
 * and is still running when the inner wrapper's failure settles. Node's default ends a process on
 * an unhandled rejection, which jest's own handlers do not show; the process must survive.
 */
const APPLICATION = `
const { Pool } = require('pg');
const { createInbox, pgTransactions } = require('@ferry/core');
(async () => {
  const pool = new Pool({ connectionString: process.argv[1] });
  pool.on('error', () => undefined);
  let innerEnded;
  const ended = new Promise((resolve) => (innerEnded = resolve));
  const outer = async (_c, next) => {
    void next();
    await ended;
    await pool.query('SELECT 1');
  };
  const inner = async (_c, next) => {
    try { await next(); } finally { innerEnded(); }
  };
  const inbox = createInbox(pgTransactions(pool), {
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    handlerContext: [outer, inner],
    handlers: { orders: async () => { throw new Error('handler failed'); } },
  });
  const { record } = await inbox.accept({ consumer: 'orders', messageId: 'careless', tenantId: 'acme', payload: { n: 1 } });
  await inbox.runOnce();
  await inbox.close();
  const { rows } = await pool.query('SELECT status, last_error FROM ferry_inbox_receipts WHERE id = $1', [record.id]);
  await pool.end();
  console.log(JSON.stringify({ status: rows[0].status, misuse: rows[0].last_error.includes('FERRY_WRAPPER_MISUSE') }));
})();
`;

it('an application process survives an outer wrapper that drops next() while the failure settles', async () => {
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['-e', APPLICATION, t.url],
      { cwd: path.join(__dirname, '..', '..'), timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
  expect({ code: result.code, stdout: result.stdout.trim() }).toEqual({
    code: 0,
    stdout: JSON.stringify({ status: 'RETRYABLE', misuse: true }),
  });
});

it('a next() called after the wrapper returned runs no handler and is refused', async () => {
  let late: Promise<unknown> | undefined;
  let lateCalled: () => void = () => undefined;
  const called = new Promise<void>((resolve) => (lateCalled = resolve));
  const { row, calls } = await runWith(async (_c, next) => {
    setImmediate(() => {
      late = next().then(
        () => 'ran',
        (error: unknown) => (error as { code?: string }).code,
      );
      lateCalled();
    });
  }, false);
  await called;
  expect(await late).toBe('FERRY_WRAPPER_MISUSE');
  expect(calls()).toBe(0);
  expect(row.status).toBe('RETRYABLE');
  expect(row.last_error).toContain('FERRY_WRAPPER_MISUSE');
});

it('a wrapper that returns without awaiting a handler that never settles fails at the transaction deadline', async () => {
  const consumer = 'misuse-hung';
  const inbox = makeInbox(t.prisma, {
    handlerContext: async (_c, next) => void next(),
    worker: { transactionTimeoutMs: 500 },
    handlers: { [consumer]: () => new Promise<void>(() => undefined) },
  });
  const { record } = await inbox.accept(message({ consumer }));
  expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0 });
  expect((await receiptRow(t, record.id)).status).not.toBe('COMPLETED');
});
