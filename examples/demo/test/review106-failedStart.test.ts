import { dropDatabase } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { scratchDatabaseUrl, serverUrl } from '../../../test-support/database';
import { runExampleProcess } from '../../test/exampleProcess';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_r106');
afterAll(() => dropDatabase(databaseUrl));

describe('review 106: the demo with Kafka down', () => {
  it('prints why it could not start and exits with 1, closing what it had started (inbox worker, metrics, tracing)', async () => {
    const exit = await runExampleProcess(
      'demo',
      {
        FERRY_DATABASE_URL: serverUrl(),
        FERRY_DEMO_DATABASE: new URL(databaseUrl).pathname.slice(1),
        FERRY_KAFKA_BROKERS: `127.0.0.1:${await closedPort()}`,
        FERRY_DEMO_ORDERS: '10',
        FERRY_DEMO_DUPLICATES: '2',
      },
      180_000, // ferry's sources are transpiled first; on main the process never exits
    );
    expect(exit.output).toContain('ferry demo failed: FerryError: creating Kafka topics failed');
    expect(exit.code).toBe(1);
  }, 240_000);
});
