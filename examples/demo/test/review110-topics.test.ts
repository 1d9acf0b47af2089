import { demoConfig } from '../src/config';
import { runDemo } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';
import { kafkaLeftovers as leftovers } from '../../test/kafkaLeftovers';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_r110t');
afterAll(() => dropDatabase(databaseUrl));

describe('review 110: the demo deletes the Kafka topics and consumer groups its run created', () => {
  it('interrupted while it runs: its topics and groups are gone once it rejected', async () => {
    const config = { ...demoConfig(), databaseUrl, orders: 3_000, deadlineMs: 120_000 };
    const interrupt = new AbortController();
    const run = runDemo(config, interrupt.signal);
    const outcome = run.then(
      () => 'finished',
      (error: unknown) => String(error),
    );
    try {
      // Interrupted once the downstream consumer joined its group: the pipeline runs.
      const until = Date.now() + 120_000;
      let settled = false;
      void outcome.then(() => (settled = true));
      while (!settled && Date.now() < until) {
        if (
          (await leftovers(config.kafkaBrokers, config.runId)).some((n) =>
            n.startsWith('group ferry-demo-downstream'),
          )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await leftovers(config.kafkaBrokers, config.runId)).toEqual(
        expect.arrayContaining([`ferry.demo.order-events.${config.runId}`]),
      );
      interrupt.abort(new Error('interrupted (review 110)'));
      expect(await outcome).toContain('interrupted (review 110)');
      expect(await leftovers(config.kafkaBrokers, config.runId)).toEqual([]);
    } finally {
      // Whatever failed above, the run ends before the database is dropped (its relay ran on).
      interrupt.abort(new Error('interrupted (review 110)'));
      await outcome;
    }
  }, 240_000);
});
