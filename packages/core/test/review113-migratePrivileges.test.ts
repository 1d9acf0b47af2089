/**
 * Review 113: ferry's migrator run by a role that may not create in the schema (PostgreSQL 15's
 * default for `public`, for every role but the database owner), or that may not write a migrations
 * table a DBA created.
 *
 * Defect: migrate failed with FERRY_DATABASE_UNAVAILABLE, retriable ("permission denied for schema
 * public"): an init container or deploy step that retries retriable errors waited for an outage
 * that was a missing GRANT, and the code read as "the database is down". A migration that failed
 * the same way inside its SQL was already FERRY_MIGRATION_FAILED, not retriable. Now every refusal
 * of a privilege (42501) in migrate is FERRY_MIGRATION_FAILED, not retriable, naming what failed;
 * nothing is left half-made.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

const ROLE = `ferry_r113_${randomBytes(4).toString('hex')}`;
let t: TestDatabase;
let pool: Pool;

beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
  await t.db.execute(
    `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} LOGIN; END IF; END $$`,
  );
  await t.db.execute('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  const url = new URL(t.url);
  url.username = ROLE;
  pool = listened(new Pool({ connectionString: url.toString(), max: 2 }));
});
afterEach(async () => {
  await pool.end();
  await t.drop();
});
afterAll(async () => {
  await t.db.execute(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
});

async function tables(): Promise<string[]> {
  const rows = await t.db.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
  );
  return rows.map((row) => row.name);
}

it('a role without CREATE on the schema: FERRY_MIGRATION_FAILED, not retriable, naming the privilege; nothing made', async () => {
  const error = await migrate(fromPg(pool)).catch((e: unknown) => e);
  expect(error).toMatchObject({ code: 'FERRY_MIGRATION_FAILED', retriable: false });
  expect((error as Error).message).toMatch(/permission denied for schema public/);
  expect((error as Error).message).toMatch(/CREATE/);
  expect(await tables()).toEqual([]);
});

it('a migrations table the role may not write: FERRY_MIGRATION_FAILED, not retriable, naming the migration', async () => {
  await t.db.execute(
    'CREATE TABLE ferry_schema_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  await t.db.execute(`GRANT CREATE ON SCHEMA public TO ${ROLE}`);
  const error = await migrate(fromPg(pool)).catch((e: unknown) => e);
  expect(error).toMatchObject({
    code: 'FERRY_MIGRATION_FAILED',
    retriable: false,
    details: { migration: '0001_outbox', notAttempted: expect.arrayContaining(['0002_inbox']) },
  });
  expect((error as Error).message).toMatch(/permission denied for table ferry_schema_migrations/);
  expect(await tables()).toEqual(['ferry_schema_migrations']);
});
