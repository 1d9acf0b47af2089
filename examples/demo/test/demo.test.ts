import { demoConfig } from '../src/config';
import { runDemo } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_t');
afterAll(() => dropDatabase(databaseUrl));

describe('the main demo', () => {
  it('accepts every order once, dead-letters the invalid ones and relays one event per order to Kafka', async () => {
    const config = { ...demoConfig(), databaseUrl, orders: 120, duplicates: 30, deadlineMs: 90_000 };
    const result = await runDemo(config);
    expect(result.disagreements).toEqual([]);
    expect(result.counts).toMatchObject({
      offered: 120 + 30 + config.invalid,
      accepted: 120,
      duplicatesAbsorbed: 30,
      deadLettered: config.invalid,
      ordersWritten: 120,
      eventsOnKafka: 120,
    });
    expect(result.counts.deadLetterReasons).toEqual({
      missing_identity: 4,
      unparseable_body: 4,
      payload_too_large: 4,
    });
    expect(result.counts.latenciesMs).toHaveLength(120);
  }, 120_000);
});
