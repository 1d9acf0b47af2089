import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { installTracing, type TestTracing } from '../../../../test-support/tracing';

/**
 * A test database and OpenTelemetry's in-memory SDK for the calling describe block: created
 * before all its tests, dropped and shut down after them; the exporter and the inbox's receipts
 * are emptied before each test, so each test finds its own spans and runs its own receipts.
 */
export function useTracedDatabase(): {
  readonly db: () => TestDatabase;
  readonly tracing: () => TestTracing;
} {
  let database: TestDatabase | undefined;
  let sdk: TestTracing | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    sdk = installTracing();
  });
  afterAll(async () => {
    await sdk?.shutdown();
    await database?.drop();
  });
  beforeEach(async () => {
    await database?.db.execute('DELETE FROM ferry_inbox_receipts');
    sdk?.exporter.reset();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useTracedDatabase: used before its beforeAll ran');
    return value;
  };
  return { db: () => ready(database), tracing: () => ready(sdk) };
}
