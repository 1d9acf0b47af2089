/**
 * emit / emitMany given a node-postgres client that still has statements queued (the application
 * called `client.query('BEGIN')` without awaiting it). ferry tells "root client" from "open
 * transaction" by the client's transaction status, which PostgreSQL reports only once a statement
 * is answered: with the BEGIN still queued the client looks idle. On main ferry then opened a
 * transaction of its own behind the application's BEGIN and committed it (PostgreSQL takes the
 * second BEGIN for a warning): the application's transaction was committed under it, and its
 * ROLLBACK rolled back nothing. emit now refuses such a client (FERRY_VALIDATION_FAILED on `tx`):
 * it cannot tell whether the client is in a transaction.
 */
import pg from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createEmitter, emit, emitMany, isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('CREATE TABLE app_rows (run text NOT NULL)');
});
beforeEach(async () => {
  client = listened(new pg.Client({ connectionString: t.url }));
  await client.connect();
});
afterEach(async () => {
  await client.end();
});
afterAll(async () => {
  await t.drop();
});

async function count(sql: string, run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(sql, [run]);
  return row?.n ?? -1;
}
const events = (run: string) =>
  count(`SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`, run);
const appRows = (run: string) => count('SELECT count(*)::int AS n FROM app_rows WHERE run = $1', run);

function expectRefused(error: unknown): void {
  expect(isFerryError(error, 'FERRY_VALIDATION_FAILED')).toBe(true);
  expect(error).toMatchObject({ retriable: false, message: expect.stringMatching(/cannot tell/) });
}

it('refuses a client whose BEGIN is still queued, and the application rolls back alone', async () => {
  const run = 'unawaited-begin';
  const begin = client.query('BEGIN'); // not awaited
  const outcome = await emit(client, { type: 'pending.begin', payload: { run } }).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await begin;
  await client.query('INSERT INTO app_rows (run) VALUES ($1)', [run]);
  await client.query('ROLLBACK');
  // On main the application's INSERT ran after ferry's COMMIT, outside any transaction.
  expect(await appRows(run)).toBe(0);
  expect(await events(run)).toBe(0);
  expect(outcome).toHaveProperty('error');
  expectRefused((outcome as { error: unknown }).error);
});

it('refuses a client in a transaction whose ROLLBACK is still queued (the events would be committed)', async () => {
  const run = 'unawaited-rollback';
  await client.query('BEGIN');
  const rollback = client.query('ROLLBACK'); // not awaited
  const outcome = emitMany(client, [{ type: 'pending.rollback', payload: { run } }]).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await rollback;
  const result = await outcome;
  expect(await events(run)).toBe(0);
  expectRefused((result as { error: unknown }).error);
});

it('refuses a client not connected yet (its status unknown: ferry joined no transaction)', async () => {
  const run = 'unawaited-connect';
  const fresh = listened(new pg.Client({ connectionString: t.url }));
  const connecting = fresh.connect(); // not awaited
  const inserted: boolean[] = [];
  const emitter = createEmitter({
    observer: (event) => void (event.type === 'inserted' && inserted.push(event.committed)),
  });
  const outcome = emitter.emit(fresh, { type: 'pending.connect', payload: { run } }).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await connecting;
  const result = await outcome;
  await fresh.end();
  // On main ferry took it for inside the application's transaction (committed: false) while its
  // statements ran on their own, each committed at once.
  expect({ inserted, rows: await events(run) }).toEqual({ inserted: [], rows: 0 });
  expectRefused((result as { error: unknown }).error);
});

it('still emits on an idle client (its own transaction) and inside an awaited BEGIN', async () => {
  await emit(client, { type: 'pending.idle', payload: { run: 'idle' } });
  expect(await events('idle')).toBe(1);
  await client.query('BEGIN');
  await emit(client, { type: 'pending.joined', payload: { run: 'joined' } });
  await client.query('ROLLBACK');
  expect(await events('joined')).toBe(0);
});
