import { Pool } from 'pg';
import {
  checkSchema,
  createOutboxAdmin,
  fromPg,
  fromPrisma,
  Inbox,
  InboxAdmin,
  isFerryError,
  migrate,
} from '@ferry/core';
import { translateDbError } from '../../src/sql/dbErrors';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';
import { quietLogger } from '../inbox/helpers';

const CLOSED_PORT = 'postgresql://postgres@127.0.0.1:1/none';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** The translated failure of `sql`, run through Prisma and through node-postgres. */
async function failuresOf(sql: string): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const db of [t.db, fromPg(pool)]) {
    const raw = await db.query(sql).then(
      () => new Error('the statement did not fail'),
      (e: unknown) => e,
    );
    failures.push(translateDbError(raw, 'probe'));
  }
  return failures;
}

const BAD_TYPE = `INSERT INTO outbox_events (id, event_type, payload, max_retries)
  VALUES (gen_random_uuid(), '', '{}', 1)`;

describe('one PostgreSQL-error translation', () => {
  it('a data exception (class 22) is a non-retriable validation error naming its SQLSTATE', async () => {
    for (const [sql, sqlState] of [
      [`SELECT '{"a":"\\u0000"}'::jsonb AS x`, '22P05'],
      [`SELECT 'x'::int AS n`, '22P02'],
    ] as const) {
      for (const failure of await failuresOf(sql)) {
        expect(failure).toMatchObject({
          code: 'FERRY_VALIDATION_FAILED',
          retriable: false,
          details: { sqlState },
        });
      }
    }
  });

  it('an integrity violation (class 23) names the constraint and is not retriable', async () => {
    for (const failure of await failuresOf(BAD_TYPE)) {
      expect(failure).toMatchObject({
        code: 'FERRY_VALIDATION_FAILED',
        retriable: false,
        details: { sqlState: '23514', constraint: 'outbox_events_type_check' },
      });
    }
  });

  it('a query cancelled by statement_timeout is the retriable FERRY_TIMEOUT', async () => {
    const raw = await t.db
      .transaction(async (tx) => {
        await tx.query(`SELECT set_config('statement_timeout', '1', true)`);
        await tx.query(`SELECT pg_sleep(5)`);
      })
      .catch((e: unknown) => e);
    expect(translateDbError(raw, 'probe')).toMatchObject({
      code: 'FERRY_TIMEOUT',
      retriable: true,
      details: { sqlState: '57014' },
    });
  });

  it('an unclassified SQLSTATE is the retriable FERRY_DATABASE_ERROR carrying the SQLSTATE', async () => {
    for (const failure of await failuresOf(
      `DO $$ BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = 'XX001'; END $$`,
    )) {
      expect(failure).toMatchObject({
        code: 'FERRY_DATABASE_ERROR',
        retriable: true,
        details: { sqlState: 'XX001' },
      });
    }
  });

  it('initialize(), checkSchema() and migrate() on a closed port are FERRY_DATABASE_UNAVAILABLE, never a raw error', async () => {
    const unreachable = prismaFor(CLOSED_PORT);
    const closedPool = new Pool({ connectionString: CLOSED_PORT });
    try {
      const inbox = new Inbox(unreachable, { logger: quietLogger, worker: { enabled: false } });
      for (const attempt of [
        () => inbox.initialize(),
        () => checkSchema(fromPrisma(unreachable)),
        () => checkSchema(fromPg(closedPool)),
        () => migrate(fromPrisma(unreachable)),
      ]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
        expect(error).toMatchObject({ retriable: true });
      }
    } finally {
      await closedPool.end();
      await unreachable.$disconnect();
    }
  });

  it('outbox admin, inbox admin and acceptance translate an unreachable database the same way', async () => {
    const unreachable = prismaFor(CLOSED_PORT);
    try {
      const inbox = new Inbox(unreachable, { logger: quietLogger, worker: { enabled: false } });
      for (const attempt of [
        () => createOutboxAdmin(fromPrisma(unreachable)).stats(),
        () => new InboxAdmin(unreachable).forTenant('acme').stats(),
        () => inbox.acceptMany([{ consumer: 'c', messageId: 'm', tenantId: 't', payload: {} }]),
      ]) {
        const error = await (attempt() as Promise<unknown>).catch((e: unknown) => e);
        expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
        expect(error).toMatchObject({ retriable: true, details: { sqlState: null } });
      }
    } finally {
      await unreachable.$disconnect();
    }
  });

  it('driver-level failures carry driverCode, not a made-up SQLSTATE', () => {
    const pipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    expect(translateDbError(pipe, 'probe')).toMatchObject({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      details: { sqlState: null, driverCode: 'EPIPE' },
    });
    const pool = new Error('timeout exceeded when trying to connect');
    expect(translateDbError(pool, 'probe')).toMatchObject({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      retriable: true,
    });
    const prismaPool = Object.assign(new Error('Timed out fetching a new connection'), { code: 'P2024' });
    expect(translateDbError(prismaPool, 'probe')).toMatchObject({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      details: { sqlState: null, driverCode: 'P2024' },
    });
  });

  it('a PL/pgSQL exception (P0001) keeps its SQLSTATE', async () => {
    for (const failure of await failuresOf(`DO $$ BEGIN RAISE EXCEPTION 'boom'; END $$`)) {
      expect(failure).toMatchObject({ code: 'FERRY_DATABASE_ERROR', details: { sqlState: 'P0001' } });
    }
  });
});
