/**
 * Review 83: "invalid handler payloads ... become DEAD" (spec 002); docs/inbox.md: handlers are
 * `{ parse(payload), handle(parsed, context) }` and "`parse` throwing makes the receipt DEAD
 * (invalid payload)". The type is `parse?: (payload) => unknown`, so an async parse is accepted
 * as it is (zod's `parseAsync`, class-validator's `validate`, both async): `parse: (p) =>
 * Order.parseAsync(p)` type-checks.
 *
 * process.ts invokeHandler calls `handler.parse(payload)` without awaiting it: a parse that
 * rejects is not caught there, the rejected promise is handed to `handle` as the "parsed" value,
 * and:
 * - the handler runs although the payload was refused (parse never answered a value);
 * - a handle that does not await the promise (it was typed as the parsed value) completes the
 *   receipt: an invalid payload is COMPLETED, not DEAD;
 * - the rejection is never handled: an `unhandledRejection`, which ends a Node process (Node's
 *   default `--unhandled-rejections=throw`): one such message takes the application down, and
 *   again after each restart (its claim is recovered and run again).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a parse() whose promise rejects makes the receipt DEAD (invalid payload) without running handle()', async () => {
  let handled = 0;
  const inbox = makeInbox(t.prisma, {
    handlers: {
      orders: {
        // An async schema check (zod parseAsync, class-validator) refusing the payload.
        parse: async () => {
          throw new Error('orderId: Required');
        },
        handle: async () => {
          handled += 1;
        },
      },
    },
  });
  const { record } = await inbox.accept(message());
  await inbox.runOnce();
  const row = await receiptRow(t, record.id);
  // Received: { status: 'COMPLETED', handled: 1 }.
  expect({ status: row.status, handled }).toEqual({ status: 'DEAD', handled: 0 });
});

/** An application process (plain Node, @ferry/core as installed) with that handler: it must survive the message. */
const APPLICATION = `
const { Pool } = require('pg');
const { createInbox, pgTransactions } = require('@ferry/core');
(async () => {
  const pool = new Pool({ connectionString: process.argv[1] });
  const inbox = createInbox(pgTransactions(pool), {
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    handlers: {
      orders: { parse: async () => { throw new Error('orderId: Required'); }, handle: async () => undefined },
    },
  });
  await inbox.accept({ consumer: 'orders', messageId: 'poison', tenantId: 'acme', payload: { n: 1 } });
  await inbox.runOnce();
  await inbox.close();
  await pool.end();
  console.log('SURVIVED');
})();
`;

it('an application process survives a message whose async parse() rejects', async () => {
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['-e', APPLICATION, t.url],
      { cwd: path.join(__dirname, '..'), timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
  // Received: exit code 1, "Error: orderId: Required" as an unhandled rejection on stderr.
  expect({ code: result.code, survived: result.stdout.includes('SURVIVED') }).toEqual({
    code: 0,
    survived: true,
  });
});
