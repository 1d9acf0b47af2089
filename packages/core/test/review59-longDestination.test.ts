/**
 * Review 59: migration 0011 indexes coalesce(destination, '') of every PENDING row, and destination
 * is unbounded text. A btree entry holds at most 2,704 bytes, so a PENDING row inserted by SQL
 * with a long destination (one emit() refuses: another service, a hand-written fix) can no longer
 * be written, and a table that holds one cannot be migrated. ferry documents such rows as refused
 * alone by the relay (foreignRows.ts: "an empty or overlong destination"; FAILED naming the field,
 * test/outbox/foreignRows.test.ts 'destination-long', which uses repeat('d', 513): it compresses
 * under the limit). emit() itself is safe: maxIdLength is at most 512 characters (2,048 bytes).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, migrate } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { drainAll, relay, statusOf } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** 3,200 characters that do not compress (an ARN-like name a buggy writer concatenated). */
const LONG = `(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 100) i)`;

async function insertForeign(id: string): Promise<unknown> {
  return t.db
    .execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, destination)
       VALUES ($1::uuid, 'foreign', '{}', 5, ${LONG})`,
      [id],
    )
    .then(
      () => 'inserted',
      (error: { message?: string }) => error.message,
    );
}

it('a row inserted by SQL with an overlong destination is refused alone by the relay, not by PostgreSQL', async () => {
  // What a user sees: the other service's transaction that writes the outbox row fails with
  // "index row size 3232 exceeds btree version 4 maximum 2704 for index
  // outbox_events_due_destination_idx" (its business write rolled back with it); before 0011 the
  // row was written and the relay FAILED it alone ("not a valid outbox event: destination: ...").
  await t.db.execute('DELETE FROM outbox_events');
  const id = randomUUID();
  expect(await insertForeign(id)).toBe('inserted');
  const r = relay(t.db, new InMemoryPublisher(), { batchSize: 10 });
  try {
    await drainAll(r, t.db);
  } finally {
    await r.close();
  }
  expect(await statusOf(t.db, id)).toMatchObject({
    status: 'FAILED',
    last_error: expect.stringMatching(/^not a valid outbox event: destination/) as string,
  });
});

it('migration 0011 applies to a table holding such a PENDING row', async () => {
  // What a user sees on upgrade: `ferry migrate` fails (FERRY_MIGRATION_FAILED, the index row size
  // error) on every attempt while one PENDING row with a long destination is in the table, so the
  // upgrade stops until someone finds and edits that row; the relay would have refused it alone.
  await t.db.execute('DELETE FROM outbox_events');
  await t.db.execute('DROP INDEX IF EXISTS outbox_events_due_destination_idx');
  await t.db.execute(`DELETE FROM ferry_schema_migrations WHERE name LIKE '0011%'`);
  expect(await insertForeign(randomUUID())).toBe('inserted'); // as before 0011
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  try {
    const outcome = await migrate(fromPg(pool), { timeoutMs: 5_000 }).then(
      (result) => result.applied,
      (error: { code?: string; message?: string }) => `${error.code}: ${error.message}`,
    );
    expect(outcome).toEqual(['0011_outbox_due_destination']);
  } finally {
    await pool.end();
  }
});
