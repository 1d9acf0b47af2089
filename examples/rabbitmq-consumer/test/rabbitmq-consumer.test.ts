import { runAdminCommand } from '../src/admin';
import { exampleConfig } from '../src/config';
import { runRabbitmqConsumer } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_ex_rabbit_t');
afterAll(() => dropDatabase(databaseUrl));

describe('examples/rabbitmq-consumer', () => {
  it('processes each order once, lists the refunds as DEAD, requeues them after the fix and completes them', async () => {
    const config = { ...exampleConfig(), databaseUrl };
    const counts = await runRabbitmqConsumer(config, { orders: 12, refunds: 3, duplicates: 4 });
    expect(counts).toEqual({
      published: 16,
      duplicatesAbsorbed: 4,
      completedFirstPass: 9,
      deadListed: 3,
      requeued: 3,
      completed: 12,
      dead: 0,
      orderRows: 12,
      distinctOrders: 12,
    });

    // The CLI entry points, against the database the run left behind.
    expect(await runAdminCommand(['list-dead'], config)).toEqual([]);
    await expect(runAdminCommand(['drop-everything'], config)).rejects.toThrow('usage: admin.js');
  }, 60_000);
});
