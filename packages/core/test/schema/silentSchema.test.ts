/**
 * checkSchema() and migrate() run their own statements and transactions on the executor the
 * application passed: each has a deadline of its own, whatever the driver sets (none here).
 * - checkSchema on a database gone silent (a network blackhole) fails with a retriable
 *   FERRY_TIMEOUT within `statementTimeoutMs`; on main it waited for ever.
 * - migrate whose COMMIT answer is lost (PostgreSQL committed, the answer never came) asks
 *   PostgreSQL whether it landed and goes on; on main node-postgres spared the committing
 *   transaction from its deadline and migrate waited for ever.
 * The test's own bounded wait (HANG_MS) tells a hang from an answer.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { checkSchema, fromPg, isFerryError, migrate } from '@ferry/core';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../../test-support/commitSwallowingProxy';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { halfOpenProxy } from '../../../../test-support/halfOpenProxy';

/** Far above every deadline under test (and their grace): a call still waiting then hangs. */
const HANG_MS = 10_000;

let t: TestDatabase;
const ends: (() => unknown)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  for (const end of ends.splice(0)) await Promise.resolve(end()).catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

function poolOn(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined); // the proxy's doing
  ends.push(() => pool.end());
  return pool;
}

it('checkSchema on a database gone silent fails with a retriable FERRY_TIMEOUT', async () => {
  const proxy = await halfOpenProxy(new URL(t.url));
  ends.unshift(() => proxy.close()); // first: ends the silent sockets, so the pool can end
  const db = fromPg(poolOn(proxy.url(t.url)));
  await checkSchema(db); // the pool holds a connection through the proxy
  proxy.silence();
  const outcome = await outcomeWithin(checkSchema(db, { statementTimeoutMs: 300 }), HANG_MS);
  expect(outcome).not.toBe('hung');
  const { error } = outcome as { error: unknown };
  expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
  expect(error).toMatchObject({ retriable: true });
});

it('checkSchema on a server that never completes the connection is FERRY_DATABASE_UNAVAILABLE (no statement was sent)', async () => {
  const proxy = await halfOpenProxy(new URL(t.url));
  ends.unshift(() => proxy.close());
  proxy.silence(); // before the first connection: its startup is never answered
  const db = fromPg(poolOn(proxy.url(t.url)));
  const outcome = await outcomeWithin(checkSchema(db, { statementTimeoutMs: 300 }), HANG_MS);
  expect(outcome).not.toBe('hung');
  const { error } = outcome as { error: unknown };
  expect(error).toMatchObject({ code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true });
});

it('checkSchema refuses a statementTimeoutMs out of bounds', async () => {
  await expect(checkSchema(t.db, { statementTimeoutMs: 5 })).rejects.toMatchObject({
    code: 'FERRY_CONFIG_INVALID',
  });
});

it('migrate whose COMMIT answer is lost asks PostgreSQL and goes on', async () => {
  const proxy: CommitSwallowingProxy = await commitSwallowingProxy();
  ends.unshift(() => proxy.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-silent-mig-'));
  mkdirSync(path.join(dir, '0001_lost_answer'));
  writeFileSync(path.join(dir, '0001_lost_answer', 'migration.sql'), 'CREATE TABLE lost_answer (a int);');
  const db = fromPg(poolOn(proxy.url(t.url)));
  proxy.arm(); // the first COMMIT: the migrations table's, then the file's runs on
  const outcome = await outcomeWithin(migrate(db, { migrationsDir: dir, timeoutMs: 500 }), HANG_MS);
  expect(proxy.swallowed()).toBe(true);
  expect(outcome).not.toBe('hung');
  expect(outcome).toEqual({ value: { applied: ['0001_lost_answer'], alreadyApplied: [] } });
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM app_migrations');
  expect(row?.n).toBe(1);
});
