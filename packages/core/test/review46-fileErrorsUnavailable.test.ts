/**
 * Review 46: a migrations file ferry cannot read is reported as PostgreSQL being down.
 *
 * What I did: checkSchema() (what `ferry check --migrations-dir`, health's readiness and start-up
 * checks run) on an application's migrations folder whose `migration.sql` the process may not read
 * (EACCES: a container whose user is not the files' owner). The tests run as root, for whom no
 * file is unreadable, so the read fails through a spy on fs.readFileSync with the error Node
 * throws then (code EACCES, syscall open).
 *
 * What happened: findMissing() reads the folder inside `dbCall('check schema', ...)`, so the file
 * error goes through translateDbError, which since review 44 maps the codes EACCES and ENOENT to
 * FERRY_DATABASE_UNAVAILABLE (a Unix socket that is gone or closed to us): the answer is a
 * retriable "database unavailable" (CLI hint: "check --database-url ... and that PostgreSQL is
 * up"; a readiness or start-up loop retries it for ever, a transport holds its deliveries) for
 * a local file that will not become readable by waiting. Any ENOENT / EACCES thrown inside a
 * translated call takes that path; these codes do not say "connection" by themselves.
 *
 * What should happen: a failure to read the migrations folder is not a database outage: a
 * non-retriable error naming the file (as FERRY_MIGRATIONS_NOT_FOUND for a missing folder).
 *
 * Fix direction: read the migration files outside dbCall (as migrate() does), and map
 * ENOENT / EACCES to UNAVAILABLE only for errors of a connection attempt (syscall `connect`, an
 * `address` naming the socket), not by code alone.
 */
import type * as Fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkSchema, isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

/** The fs module object the compiled sources call into (a namespace import cannot be spied on). */
const fs = jest.requireActual<typeof Fs>('node:fs');

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'review46-migrations-'));
  fs.mkdirSync(path.join(dir, '001_orders'));
  fs.writeFileSync(path.join(dir, '001_orders', 'migration.sql'), 'CREATE TABLE orders (id int);');
});
afterAll(async () => {
  jest.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
  await t.drop();
});

it('does not call an unreadable migration file a database outage', async () => {
  const read = fs.readFileSync;
  jest.spyOn(fs, 'readFileSync').mockImplementation(((file: Fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    if (typeof file === 'string' && file.startsWith(dir)) {
      throw Object.assign(new Error(`EACCES: permission denied, open '${file}'`), {
        code: 'EACCES',
        errno: -13,
        syscall: 'open',
        path: file,
      });
    }
    return (read as (...args: unknown[]) => unknown)(file, ...rest);
  }) as typeof Fs.readFileSync);
  const error = await checkSchema(t.db, { migrationsDir: dir }).then(
    () => undefined,
    (e: unknown) => e,
  );
  jest.restoreAllMocks();
  expect(isFerryError(error)).toBe(true);
  const { code, retriable } = error as { code: string; retriable: boolean };
  // On main: { code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true }.
  expect({ code, retriable }).not.toEqual({ code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true });
  expect(retriable).toBe(false);
});
