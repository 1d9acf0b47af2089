/**
 * `errorBackoff` above 30 s is the first wait after a failed cycle, not silently 30 s (review 45's
 * note): the back-off doubles from it up to 30 s, or to `errorBackoff` itself when it is longer.
 */
import { createRelay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { failingStatements } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it.each([
  [1_000, 1_000],
  [45_000, 45_000],
])(
  'waits errorBackoff %p ms after the first failed cycle (reported delayMs %p)',
  async (errorBackoff, expected) => {
    const delays: unknown[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (fields: unknown, message?: string) => {
        if (message === 'outbox relay cycle failed') delays.push((fields as { delayMs?: unknown }).delayMs);
      },
    };
    const relay = createRelay({
      db: failingStatements(t.db, 'claimed AS'),
      publisher: new InMemoryPublisher(),
      logger,
      options: { errorBackoff, pollInterval: 10_000 },
    });
    relay.start();
    try {
      const until = Date.now() + 10_000;
      while (delays.length === 0 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await relay.close();
    }
    expect(delays[0]).toBe(expected);
  },
  20_000,
);
