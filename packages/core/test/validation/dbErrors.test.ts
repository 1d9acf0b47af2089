import { inspect } from 'node:util';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  checkSchema,
  createOutboxAdmin,
  emit,
  fromPg,
  fromPrisma,
  Inbox,
  InboxAdmin,
  isFerryError,
  migrate,
} from '@ferry/core';
import { translateDbError } from '../../src/sql/dbErrors';
import { sqlStateOf } from '../../src/sql/sqlState';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, quietLogger } from '../inbox/helpers';

const CLOSED_PORT = 'postgresql://postgres@127.0.0.1:1/none';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
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
    const closedPool = listened(new Pool({ connectionString: CLOSED_PORT }));
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

  it("node-postgres' errors of a client or pool the application ended are FERRY_CLOSED; a connection the server ended is not", () => {
    const translated = (message: string) => {
      const error = translateDbError(new Error(message), 'probe');
      return { code: error.code, retriable: error.retriable, cause: (error.cause as Error).message };
    };
    const ended = (message: string) => ({ code: 'FERRY_CLOSED', retriable: false, cause: message });
    const lost = (message: string) => ({
      code: 'FERRY_DATABASE_UNAVAILABLE',
      retriable: true,
      cause: message,
    });
    expect(
      [
        'Client was closed and is not queryable', // a statement after end()
        'Connection terminated', // a statement in flight when end() was called
        'Cannot use a pool after calling end on the pool',
        'Connection terminated unexpectedly', // the server ended the session
        'Connection terminated due to connection timeout',
        'Client has encountered a connection error and is not queryable',
      ].map(translated),
    ).toEqual([
      ended('Client was closed and is not queryable'),
      ended('Connection terminated'),
      ended('Cannot use a pool after calling end on the pool'),
      lost('Connection terminated unexpectedly'),
      lost('Connection terminated due to connection timeout'),
      lost('Client has encountered a connection error and is not queryable'),
    ]);
  });

  it('a PL/pgSQL exception (P0001) keeps its SQLSTATE', async () => {
    for (const failure of await failuresOf(`DO $$ BEGIN RAISE EXCEPTION 'boom'; END $$`)) {
      expect(failure).toMatchObject({ code: 'FERRY_DATABASE_ERROR', details: { sqlState: 'P0001' } });
    }
  });
});

/** Everything an application's log of `error` could print: util.inspect shows causes and their fields. */
function printed(error: unknown): string {
  return `${inspect(error, { depth: 10 })} ${String((error as Error).message)}`;
}

const RAISE = `DO $$ BEGIN RAISE EXCEPTION 'login failed: password=hunter2'
  USING DETAIL = 'Key (token)=(s3cret-1) already exists.', HINT = 'api_key: k-s3cret-2'; END $$`;

/**
 * A FerryError translated from a PostgreSQL error carries no more of the driver's text than ferry
 * logs or stores: its message and its cause (message, detail, hint, stack, Prisma's meta) go
 * through the component's redactor (the built-in rules where it has none).
 */
describe('database errors translated into FerryErrors, redacted', () => {
  it('redact the driver message, detail and hint, in the message and the cause, through Prisma and node-postgres', async () => {
    for (const db of [t.db, fromPg(pool)]) {
      const raw = await db.query(RAISE).then(
        () => new Error('the statement did not fail'),
        (e: unknown) => e,
      );
      expect(printed(raw)).toContain('hunter2'); // the driver's error holds the secrets
      const error = translateDbError(raw, 'probe');
      expect(error.message).toBe('probe failed: login failed: password=[redacted]');
      expect(printed(error)).not.toMatch(/hunter2|s3cret-1|k-s3cret-2/);
      // The cause keeps its class and codes: an application can still tell what failed.
      expect(Object.getPrototypeOf(error.cause)).toBe(Object.getPrototypeOf(raw));
      expect(sqlStateOf(error.cause)).toBe('P0001');
      expect(error).toMatchObject({ code: 'FERRY_DATABASE_ERROR', details: { sqlState: 'P0001' } });
    }
  });

  it('redact the values of a unique violation on a sensitive column', async () => {
    await pool.query('CREATE TABLE sessions (token text UNIQUE, note text UNIQUE)');
    await pool.query(`INSERT INTO sessions VALUES ('tok-s3cret', 'password=hunter2')`);
    for (const sql of [
      `INSERT INTO sessions VALUES ('tok-s3cret', 'x')`,
      `INSERT INTO sessions VALUES ('y', 'password=hunter2')`,
    ]) {
      const raw = await pool.query(sql).catch((e: unknown) => e);
      expect(printed(raw)).toMatch(/tok-s3cret|hunter2/);
      const error = translateDbError(raw, 'probe');
      expect(printed(error)).not.toMatch(/tok-s3cret|hunter2/);
      expect(error).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', details: { sqlState: '23505' } });
    }
    const raw = await pool.query(`INSERT INTO sessions VALUES ('tok-s3cret', 'x')`).catch((e: unknown) => e);
    expect((translateDbError(raw, 'probe').cause as { detail?: string }).detail).toBe(
      'Key (token)=([redacted]) already exists.',
    );
  });

  it('redact the row a CHECK violation quotes (its payload)', async () => {
    const sql = `INSERT INTO outbox_events (id, event_type, payload, max_retries)
      VALUES (gen_random_uuid(), '', '{"note": "n0te-s3cret"}', 1)`;
    for (const db of [t.db, fromPg(pool)]) {
      const raw = await db.query(sql).catch((e: unknown) => e);
      expect(printed(raw)).toContain('n0te-s3cret');
      const error = translateDbError(raw, 'probe');
      expect(printed(error)).not.toContain('n0te-s3cret');
      expect(error).toMatchObject({ details: { sqlState: '23514', constraint: 'outbox_events_type_check' } });
    }
  });

  it("emit() throws the outbox's failure redacted", async () => {
    await pool.query(`CREATE FUNCTION leak() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused: secret=%', NEW.payload->>'pin'; END $$`);
    await pool.query(
      'CREATE TRIGGER leak BEFORE INSERT ON outbox_events FOR EACH ROW EXECUTE FUNCTION leak()',
    );
    try {
      const error = await emit(t.db, { type: 't', payload: { pin: 'p1n-s3cret' } }).catch((e: unknown) => e);
      expect(isFerryError(error)).toBe(true);
      expect(String((error as Error).message)).toContain('secret=[redacted]');
      expect(printed(error)).not.toContain('p1n-s3cret');
    } finally {
      await pool.query('DROP TRIGGER leak ON outbox_events');
    }
  });

  it("the inbox's failure goes through the inbox's own redactor (redact.keys)", async () => {
    await pool.query(`CREATE FUNCTION leak_pin() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused: pin=%', NEW.message_id; END $$`);
    await pool.query(
      'CREATE TRIGGER leak_pin BEFORE INSERT ON ferry_inbox_receipts FOR EACH ROW EXECUTE FUNCTION leak_pin()',
    );
    try {
      const inbox = makeInbox(t.prisma, { redact: { keys: ['pin'] } });
      const error = await inbox.accept(message({ messageId: 'PIN-8F3K2Q' })).catch((e: unknown) => e);
      expect(isFerryError(error)).toBe(true);
      expect(String((error as Error).message)).toContain('pin=[redacted]');
      expect(printed(error)).not.toContain('8F3K2Q');
    } finally {
      await pool.query('DROP TRIGGER leak_pin ON ferry_inbox_receipts');
    }
  });
});
