import { exampleConfig } from '../src/config';
import { runOutboxToKafka } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_kafka_t');
afterAll(() => dropDatabase(databaseUrl));

describe('examples/outbox-to-kafka', () => {
  it('commits each order with its event and relays every event to the topic, read back by an independent group', async () => {
    const counts = await runOutboxToKafka({ ...exampleConfig(), databaseUrl }, 24, 4);
    expect(counts).toMatchObject({
      placed: 24,
      orderRows: 24,
      eventsSent: 24,
      eventsReadBack: 24,
      customersOutOfOrder: 0,
    });
    // At least once: a redelivery is allowed, the reader deduplicates on x-ferry-message-id.
    expect(counts.deliveriesReadBack).toBeGreaterThanOrEqual(24);
  }, 60_000);
});
