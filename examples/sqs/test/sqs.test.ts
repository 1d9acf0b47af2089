import { exampleConfig } from '../src/config';
import { runSqsRoundTrip } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_sqs_t');
afterAll(() => dropDatabase(databaseUrl));

describe('examples/sqs', () => {
  it('relays every event through SQS into the inbox and ships each order once, duplicates included', async () => {
    const counts = await runSqsRoundTrip({ ...exampleConfig(), databaseUrl }, 20, 5);
    expect(counts).toEqual({
      emitted: 20,
      sent: 20,
      duplicatesSent: 5,
      receipts: 20,
      duplicatesAbsorbed: 5,
      shipments: 20,
      distinctShipments: 20,
    });
  }, 60_000);
});
