import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/** How one in-process run of `ferry` ended: its exit code, stdout lines and stderr lines. */
export interface CliRun {
  readonly code: number;
  readonly lines: string[];
  readonly errors: string[];
}

export interface CliDatabase {
  /** The test file's database: created before its tests (beforeAll), dropped after them. */
  readonly test: TestDatabase;
  /** `ferry argv... --database-url <the test database>`, as FERRY_ACTOR ops@test. */
  cli(...argv: string[]): Promise<CliRun>;
  /** `ferry argv...` without the --database-url cli() appends (a test of that option itself). */
  bare(...argv: string[]): Promise<CliRun>;
}

async function run(argv: readonly string[]): Promise<CliRun> {
  const io = captureIo();
  const code = await runCli(argv, io, { FERRY_ACTOR: 'ops@test' });
  return { code, lines: io.lines, errors: io.errors };
}

/** Registers the database's beforeAll / afterAll; call at the top of a test file. */
export function useCliDatabase(): CliDatabase {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  const current = (): TestDatabase => {
    if (database === undefined) throw new Error('the test database exists from beforeAll on');
    return database;
  };
  return {
    get test() {
      return current();
    },
    cli: (...argv) => run([...argv, '--database-url', current().url]),
    bare: (...argv) => run(argv),
  };
}
