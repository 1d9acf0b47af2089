/**
 * Review 40 (failed first): a pgTransactions handler that throws a value whose property reads
 * throw (a Proxy, or an error whose `code` getter throws) leaks the handler's pooled connection.
 *
 * onConnection (src/sql/fromPg.ts) decides in its `finally` whether to destroy the connection, and
 * the last test it makes, lostStatements(failure), reads `failure.code` on what the handler threw.
 * For such a value that read throws inside the `finally`, before `client.release(...)`: the
 * connection is never released nor destroyed, it stays checked out of the pool for good (idle in
 * the rolled-back session). Every such throw costs one connection; once the pool is spent, every
 * handler transaction fails with FERRY_DATABASE_UNAVAILABLE (no connection within
 * transactionMaxWaitMs), and ferry's own statements on that pool (claims, renewals, acceptance)
 * time out: one hostile message per pool connection stops the whole inbox. ferry already guards
 * every other read of a thrown value against this (deadReason, isRetriedIsolation,
 * isAbandonedNotEnded, describeError), and on Prisma and Kysely the same throw costs nothing
 * (test/inbox/hostileErrors.test.ts, unreadableThrows.test.ts run on Prisma only).
 *
 * Fix direction: read `failure`'s code in a try/catch (as isAbandonedNotEnded does), or release the
 * connection in a `finally` of its own.
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { pgTransactions, type InboxHandlerContext } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { createBusinessTable, makeInbox, message, waitFor } from './inbox/helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  // A connection left checked out has no listener of ferry's or the pool's: dropping the database at
  // the end would otherwise end this process with an unhandled 'error' event.
  pool.on('connect', (client) => client.on('error', () => undefined));
});
afterAll(async () => {
  // A leaked connection is never released: end the pool without waiting for it.
  await Promise.race([pool.end(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
  await t.drop();
});

/** A thrown value whose every property read throws (and so does its prototype). */
function unreadable(): unknown {
  return new Proxy(new Error('unreadable'), {
    get() {
      throw new Error('trap');
    },
    getPrototypeOf() {
      throw new Error('trap');
    },
  });
}

/** An ordinary-looking error class whose `code` getter throws (e.g. a lazily computed code). */
class LazyCodeError extends Error {
  get code(): string {
    throw new Error('code not computed');
  }
}

async function statusOf(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ status: string }>(
    'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.status;
}

describe('review40: a pgTransactions handler that throws a value whose properties cannot be read', () => {
  it('gives its pooled connection back: the pool is not spent and later messages complete', async () => {
    const thrown = new Map<string, () => unknown>([
      ['hostile-proxy', unreadable],
      ['hostile-code', () => new LazyCodeError('lazy')],
    ]);
    const inbox = makeInbox(pgTransactions(pool), {
      statementTimeoutMs: 2_000,
      worker: { concurrency: 1, prefetch: 0, transactionMaxWaitMs: 300 },
      handlers: Object.fromEntries(
        [...thrown.keys(), 'plain'].map((consumer) => [
          consumer,
          async (_payload: unknown, context: InboxHandlerContext<PoolClient>) => {
            await context.tx.query(INSERT, [context.receiptId, consumer]);
            const make = thrown.get(consumer);
            // Each hostile handler throws on its first attempt only; its retry completes.
            if (make && context.attempt === 1) throw make();
          },
        ]),
      ),
    });
    const ids: string[] = [];
    for (const consumer of [...thrown.keys(), 'plain']) {
      ids.push((await inbox.accept(message({ consumer }))).record.id);
    }
    const completed = await waitFor(
      'every receipt COMPLETED',
      async () => {
        await inbox.runOnce().catch(() => undefined);
        const statuses = await Promise.all(ids.map(statusOf));
        return statuses.every((s) => s === 'COMPLETED') ? statuses : undefined;
      },
      12_000,
    ).catch(async () => Promise.all(ids.map(statusOf)));
    expect(completed).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // Nothing of ferry's is running any more: no connection may stay checked out.
    expect(pool.totalCount - pool.idleCount).toBe(0);
  }, 60_000);
});
