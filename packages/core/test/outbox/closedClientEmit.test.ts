/**
 * emit given a node-postgres client or pool the application has already closed, or a client a
 * connection error has broken. Each fails the same way for ever, so it must not be reported as a
 * retriable database error (a caller's retry loop would spin): it is refused like a client not
 * connected yet, FERRY_VALIDATION_FAILED on `tx`, not retriable, nothing stored. On main an ended
 * client and an ended pool gave a retriable FERRY_DATABASE_ERROR ("Client was closed and is not
 * queryable", "Cannot use a pool after calling end on the pool") and a broken client a retriable
 * FERRY_DATABASE_UNAVAILABLE at every later call (found by the review of 19d306e).
 */
import pg from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { emit, emitMany, isFerryError } from '@ferry/core';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function connected(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function stored(run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`,
    [run],
  );
  return row?.n ?? -1;
}

function expectRefused(outcome: unknown, reason: RegExp): void {
  expect(outcome).toHaveProperty('error');
  const error = (outcome as { error: unknown }).error;
  expect(isFerryError(error, 'FERRY_VALIDATION_FAILED')).toBe(true);
  expect(error).toMatchObject({ retriable: false, field: 'tx', message: expect.stringMatching(reason) });
}

it('refuses a client the application ended', async () => {
  const client = await connected();
  await client.end();
  const outcome = await outcomeWithin(
    emit(client, { type: 'closed.client', payload: { run: 'ended' } }),
    10_000,
  );
  expectRefused(outcome, /ended/);
  expect(await stored('ended')).toBe(0);
});

it('refuses a client whose end() was called and has not finished', async () => {
  const client = await connected();
  const ending = client.end();
  const outcome = await outcomeWithin(
    emitMany(client, [{ type: 'closed.client', payload: { run: 'ending' } }]),
    10_000,
  );
  await ending;
  expectRefused(outcome, /ended/);
  expect(await stored('ending')).toBe(0);
});

it('refuses a pool the application ended, and one being ended', async () => {
  const ended = listened(new pg.Pool({ connectionString: t.url }));
  await ended.end();
  expectRefused(
    await outcomeWithin(emit(ended, { type: 'closed.pool', payload: { run: 'pool' } }), 10_000),
    /ended/,
  );
  const ending = listened(new pg.Pool({ connectionString: t.url }));
  await ending.query('SELECT 1');
  const end = ending.end();
  expectRefused(
    await outcomeWithin(emit(ending, { type: 'closed.pool', payload: { run: 'pool' } }), 10_000),
    /ended/,
  );
  await end;
  expect(await stored('pool')).toBe(0);
});

it('refuses a client a connection error has broken', async () => {
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  const broken = new Promise<void>((resolve) => client.on('error', () => resolve()));
  const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
    { pid: number },
  ];
  await t.db.query(
    'SELECT pg_terminate_backend($1::int) FROM pg_stat_activity WHERE datname = current_database() AND pid = $1::int',
    [pid],
  );
  expect(await outcomeWithin(broken, 10_000)).toEqual({ value: undefined });
  const outcome = await outcomeWithin(
    emit(client, { type: 'closed.broken', payload: { run: 'broken' } }),
    10_000,
  );
  expectRefused(outcome, /connection error/);
  expect(await stored('broken')).toBe(0);
});

it('an open client and pool still emit', async () => {
  const client = await connected();
  await emit(client, { type: 'closed.none', payload: { run: 'open' } });
  await client.end();
  const pool = listened(new pg.Pool({ connectionString: t.url }));
  await emit(pool, { type: 'closed.none', payload: { run: 'open' } });
  await pool.end();
  expect(await stored('open')).toBe(2);
});
