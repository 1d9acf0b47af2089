/**
 * Review 44 (the CLI as an operator runs it from the installed package), failing tests.
 *
 * 1. PostgreSQL down behind a Unix socket. What I did: `ferry outbox stats --database-url
 *    'postgresql://postgres@/test?host=/run/postgresql'` where the socket directory exists but
 *    PostgreSQL is stopped (it removed its socket file): node-postgres fails with `connect ENOENT
 *    /run/postgresql/.s.PGSQL.5432`. What happened: `FERRY_DATABASE_ERROR` with the hint
 *    "PostgreSQL refused the statement (its message says why ...)": ferry's error translation
 *    (core src/sql/dbErrors.ts) knows ECONNREFUSED / ENOTFOUND / EHOSTUNREACH but not ENOENT, so
 *    the usual "database is down" of a socket connection is an unknown database error (which the
 *    transports' acceptance does not treat as batch-wide either). What should happen: as over TCP
 *    (ECONNREFUSED), `FERRY_DATABASE_UNAVAILABLE` with the hint "check --database-url ... and that
 *    PostgreSQL is up". Fix direction: ENOENT (a connect to a socket path) in dbErrors'
 *    TRANSLATIONS as UNAVAILABLE. The same for a server that refuses TLS (`?ssl=true` or
 *    `sslmode=require` against a PostgreSQL without SSL: "The server does not support SSL
 *    connections", FERRY_DATABASE_ERROR "refused the statement" although no statement was sent),
 *    which Prisma's adapter reports as TlsConnectionError and ferry already translates as
 *    UNAVAILABLE.
 *
 * 2. `--table` misused. What I did: `ferry migrate --table app_schema` (no --migrations-dir),
 *    `ferry migrate --migrations-dir DIR --table Bad-Name`, `ferry check --migrations-dir DIR
 *    --table ferry_schema_migrations`. What happened: exit 1, `FERRY_CONFIG_INVALID: invalid option
 *    table: is only for an application folder (migrationsDir)` (the library's option names) with
 *    the generic hint "see the FERRY error table in the @ferry/core README". What should happen (the
 *    CLI README: "An unknown command, option or malformed value is a usage error before anything
 *    touches the database", exit 2 `FERRY_USAGE`): exit 2, `FERRY_USAGE`, naming `--table`. Fix
 *    direction: check --table / --migrations-dir in the CLI (or map FerryConfigError of the
 *    command's own options to a UsageError naming the flag).
 *
 * 3. `ferry migrate` failing before its first migration. What I did: `ferry migrate` on a URL whose
 *    search_path names a schema that does not exist (`?options=-c search_path=billing` before the
 *    schema was created). What happened: `FERRY_SCHEMA_NOT_READY: migrate failed: no schema has been
 *    selected to create in`, hint "tables or migrations are missing: run `ferry migrate`": the
 *    command that failed tells the operator to run itself (SQLSTATE 3F000 is translated as a missing
 *    ferry table for every caller, migrate's CREATE TABLE included). What should happen: a migrate
 *    failure that is not answered by running migrate again (FERRY_MIGRATION_FAILED or
 *    FERRY_DATABASE_ERROR with PostgreSQL's message), never the "run `ferry migrate`" hint. Fix
 *    direction: migrate() wraps failures of its own DDL (ensureMigrationsTable) as it wraps a
 *    migration file's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '@ferry/cli';
import { closedPort } from '../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

jest.setTimeout(60_000);

interface JsonError {
  error: { code: string; message: string; hint: string };
}

async function cli(argv: string[]): Promise<{ code: number; answer: JsonError }> {
  const io = captureIo();
  const code = await runCli([...argv, '--json'], io, { FERRY_ACTOR: 'ops@test' });
  return { code, answer: JSON.parse(io.lines.join('\n')) as JsonError };
}

describe('review44: PostgreSQL down behind a Unix socket', () => {
  const socketDir = mkdtempSync(path.join(tmpdir(), 'ferry-review44-socket-'));
  afterAll(() => rmSync(socketDir, { recursive: true, force: true }));

  it('answers like a refused TCP connection: FERRY_DATABASE_UNAVAILABLE, check the URL and that PostgreSQL is up', async () => {
    const tcp = await cli([
      'outbox',
      'stats',
      '--database-url',
      `postgresql://postgres@127.0.0.1:${await closedPort()}/test`,
    ]);
    expect({ code: tcp.code, error: tcp.answer.error.code }).toEqual({
      code: 1,
      error: 'FERRY_DATABASE_UNAVAILABLE',
    });
    // The socket directory exists; PostgreSQL, stopped, removed its socket file.
    const url = `postgresql://postgres@/test?host=${encodeURIComponent(socketDir)}`;
    for (const command of [['outbox', 'stats'], ['check'], ['migrate']]) {
      const socket = await cli([...command, '--database-url', url]);
      expect(socket.answer.error.message).toContain('ENOENT');
      expect({
        command,
        code: socket.code,
        error: socket.answer.error.code,
        hint: socket.answer.error.hint,
      }).toEqual({
        command,
        code: 1,
        error: 'FERRY_DATABASE_UNAVAILABLE',
        hint: tcp.answer.error.hint,
      });
    }
  });
});

describe('review44: a server that refuses TLS', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    // Answers node-postgres's SSLRequest as a PostgreSQL built or configured without SSL does.
    server = createServer((socket) => {
      socket.once('data', () => socket.end('N'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('is a connection failure (FERRY_DATABASE_UNAVAILABLE, check the URL), not "PostgreSQL refused the statement"', async () => {
    const r = await cli([
      'outbox',
      'stats',
      '--database-url',
      `postgresql://postgres@127.0.0.1:${port}/test?ssl=true`,
    ]);
    expect(r.answer.error.message).toContain('does not support SSL');
    expect({ code: r.code, error: r.answer.error.code }).toEqual({
      code: 1,
      error: 'FERRY_DATABASE_UNAVAILABLE',
    });
  });
});

describe('review44: --table misused is a usage error (exit 2), before the database', () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'ferry-review44-migrations-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it.each([
    ['migrate', '--table', 'app_schema'],
    ['check', '--table', 'app_schema'],
    ['migrate', '--migrations-dir', folder, '--table', 'Bad-Name'],
    ['check', '--migrations-dir', folder, '--table', 'ferry_schema_migrations'],
  ])('ferry %s %s %s …', async (...argv) => {
    // A database that refuses connections: a usage error is answered before any is tried.
    const url = `postgresql://postgres@127.0.0.1:${await closedPort()}/test`;
    const r = await cli([...argv, '--database-url', url]);
    expect({ code: r.code, error: r.answer.error.code }).toEqual({ code: 2, error: 'FERRY_USAGE' });
    expect(r.answer.error.message).toContain('--table');
  });
});

describe('review44: a failing ferry migrate never answers "run ferry migrate"', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('migrate on a search_path whose schema does not exist yet', async () => {
    const url = new URL(t.url);
    url.searchParams.set('options', '-c search_path=billing_review44');
    const r = await cli(['migrate', '--database-url', url.toString()]);
    expect(r.code).toBe(1);
    expect(r.answer.error.message).toContain('no schema has been selected to create in');
    // Not the hint of ferry's tables missing ("run `ferry migrate`"): migrate's own failure, whose
    // hint is to fix the cause and run it again.
    expect(r.answer.error.hint).not.toContain('tables or migrations are missing');
    expect(r.answer.error.hint).toContain('fix the cause');
    expect(r.answer.error.code).not.toBe('FERRY_SCHEMA_NOT_READY');
  });
});
