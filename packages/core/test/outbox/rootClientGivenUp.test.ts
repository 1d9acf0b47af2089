/**
 * A transaction ferry opens on the application's one pg client (a root `Client` handed to emit,
 * InboxAdmin) under withDeadlines, given up at its whole-transaction deadline: the caller hears a
 * retriable FERRY_TIMEOUT (its COMMIT was not sent: nothing committed). On a pool ferry then
 * destroys the connection; the application's client is not ferry's to close, and on main the
 * transaction simply went on: its work ran to its end and its COMMIT was sent after the caller was
 * told nothing was committed (a retry then wrote twice). Now no COMMIT follows a give-up: the
 * transaction is rolled back. Each statement and each pause stays under the transaction's own
 * limits here (statement_timeout and idle_in_transaction_session_timeout), so PostgreSQL never
 * ends it by itself: only the whole-transaction deadline passes.
 */
import pg from 'pg';
import { isFerryError } from '@ferry/core';
import { executorFor } from '../../src/sql/applicationTransaction';
import { withDeadlines } from '../../src/sql/statementDeadline';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const TIMEOUT_MS = 1_000;
/**
 * Well under TIMEOUT_MS: each pause stays within idle_in_transaction_session_timeout also when a
 * loaded machine fires its timer late (at 200 of 300 ms, CI saw PostgreSQL end the session).
 */
const PAUSE_MS = 400;
/** Pauses enough to outlast the whole-transaction deadline (max wait + timeout + twice the grace: 4 s). */
const STEPS = 14;
const HANG_MS = 10_000;

let t: TestDatabase;
let app: pg.Client;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('CREATE TABLE given_up (step int NOT NULL)');
  app = new pg.Client({ connectionString: t.url });
  // A session PostgreSQL ended fails the test's assertions, not the file with an unhandled error.
  app.on('error', () => undefined);
  await app.connect();
});
afterAll(async () => {
  await app.end();
  await t.drop();
});

it('a root client transaction given up at its deadline commits nothing afterwards', async () => {
  const db = withDeadlines(executorFor(app), TIMEOUT_MS);
  let steps = 0;
  let workEnded: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (workEnded = resolve));
  const outcome = await outcomeWithin(
    db.transaction(async (tx) => {
      try {
        for (let step = 0; step < STEPS; step++) {
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
          await tx.execute('INSERT INTO given_up (step) VALUES ($1)', [step]);
          steps++;
        }
      } finally {
        workEnded();
      }
    }),
    HANG_MS,
  );
  expect(outcome).not.toBe('hung');
  const { error } = outcome as { error: unknown };
  expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
  expect(error).toMatchObject({ retriable: true });
  // Once the work has ended, its COMMIT or ROLLBACK is queued: a statement queued now follows it.
  expect(await outcomeWithin(ended, HANG_MS)).not.toBe('hung');
  expect(await outcomeWithin(app.query('SELECT 1'), HANG_MS)).not.toBe('hung');
  expect(steps).toBeGreaterThan(0);
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM given_up');
  expect(row?.n).toBe(0);
  expect(app.getTransactionStatus()).toBe('I');
});
