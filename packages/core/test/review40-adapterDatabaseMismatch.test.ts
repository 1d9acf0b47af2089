/**
 * Review 40 (failed first): `prismaTransactions(prisma, { db })` whose `db` is another database
 * than the Prisma client's.
 *
 * The README recommends `prismaTransactions(prisma, { db: fromPg(pool) })` (Prisma for the
 * handler, node-postgres for ferry's own statements), so the application builds the pool and the
 * Prisma client from two settings, and nothing checks that they reach the same database. When they
 * do not (a second DATABASE_URL, a pool left on another service's or an older database that also
 * holds ferry's tables), `initialize()` succeeds, acceptance and claims run on `db`, and each
 * handler transaction runs on the Prisma client's database, whose claim check finds no such
 * receipt: the handler never runs, the receipt is reported `FERRY_LEASE_LOST` ("claim lost before
 * completion") at every attempt and goes DEAD ("exhausted"). Every message is dead-lettered
 * without a word about the cause; the error names a lease, which sends an operator looking at
 * worker timings.
 *
 * Fix direction: `initialize()` compares the two sides (e.g. `current_database()`,
 * `inet_server_addr()`/`inet_server_port()`, or a marker row one side writes and the other reads)
 * and refuses with a typed FERRY_CONFIG_INVALID; a claim check that finds no row at all for the
 * receipt could say so too instead of reporting a lost lease.
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { FerryError, fromPg, prismaTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow } from './inbox/helpers';

let ferryDb: TestDatabase;
let prismaDb: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  ferryDb = await createTestDatabase();
  prismaDb = await createTestDatabase();
  pool = listened(new Pool({ connectionString: ferryDb.url, max: 3 }));
});
afterAll(async () => {
  await pool.end();
  await ferryDb.drop();
  await prismaDb.drop();
});

describe('review40: prismaTransactions with ferry’s statements on another database than the Prisma client', () => {
  it('is refused by initialize() with a typed error instead of dead-lettering every message as a lost lease', async () => {
    let ran = 0;
    const inbox = makeInbox(prismaTransactions(prismaDb.prisma, { db: fromPg(pool) }), {
      worker: { maxAttempts: 2 },
      handlers: {
        orders: async () => {
          ran += 1;
        },
      },
    });
    const started = await inbox.initialize().then(
      () => 'started',
      (error: unknown) => error,
    );
    // What the application is left with when initialize() lets it start: every message DEAD, unhandled.
    let observed: Record<string, unknown> | undefined;
    if (started === 'started') {
      const { record } = await inbox.accept(message());
      await inbox.runOnce();
      await inbox.runOnce();
      const row = await receiptRow(ferryDb, record.id);
      observed = { status: row.status, lastError: row.last_error, handlerRuns: ran };
    }
    expect({ observed, refusedTyped: started instanceof FerryError }).toEqual({
      observed: undefined,
      refusedTyped: true,
    });
  });
});
