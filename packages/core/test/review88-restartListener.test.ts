/**
 * Review 88 (lifecycle: start() again after the loop stopped on its own), failing on main.
 *
 * What I did: a relay, and an inbox worker, with a LISTEN connection (listenUrl) on a pool the
 * application then ended: the loop stops ('stopped'); start() starts it again (it stops again on
 * the same ended pool), then close().
 *
 * What happened: start() started the LISTEN connection again, which was still open (a stopped
 * loop keeps it, for start()): a second connection, the first one no longer referenced, so
 * close() ended only the second, and the first stayed open, listening, for the life of the
 * process (one more per start()).
 *
 * What should happen: one LISTEN connection however often the loop is started again, and none
 * once close() returned.
 */
import { createRelay, fromPg, pgTransactions } from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox } from './inbox/helpers';
import { silent } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The LISTEN connections to the test database. */
async function listenConnections(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
  );
  return row?.n ?? -1;
}

interface Loop {
  start(): void;
  close(): Promise<void>;
  readonly state: string;
}

async function restartTwiceThenClose(loop: Loop, pool: Pool): Promise<void> {
  loop.start();
  await waitUntil('LISTEN connected', async () => (await listenConnections()) === 1, 10_000);
  await pool.end();
  for (let round = 0; round < 2; round += 1) {
    await waitUntil('the loop stopped', () => loop.state === 'stopped', 10_000);
    loop.start();
  }
  await waitUntil('the loop stopped', () => loop.state === 'stopped', 10_000);
  // Time for a second LISTEN connection, were one opened, to connect (the count cannot pass 1
  // with the fix, whatever the time).
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(await listenConnections()).toBe(1);
  await loop.close();
  await waitUntil('no LISTEN connection left', async () => (await listenConnections()) === 0, 5_000);
}

it('a relay started again after it stopped keeps one LISTEN connection, none after close()', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const relay = createRelay({
    db: fromPg(pool),
    publisher: new InMemoryPublisher(),
    logger: silent,
    listenUrl: t.url,
    options: { pollInterval: 20, errorBackoff: 1 },
  });
  await restartTwiceThenClose(relay, pool);
}, 30_000);

it('an inbox worker started again after it stopped keeps one LISTEN connection, none after close()', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const inbox = makeInbox(pgTransactions(pool), {
    worker: { pollIntervalMs: 20, listenUrl: t.url },
    handlers: { orders: async () => undefined },
  });
  await restartTwiceThenClose(inbox, pool);
}, 30_000);
