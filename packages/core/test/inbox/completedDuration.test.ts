/**
 * A handler's duration (the `completed` event's durationMs, the metrics' histogram) is a length of
 * time: a wall clock stepped back while the handler ran (NTP, an operator) must not make it
 * negative. On Date.now() it was the step's length below zero.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, recorder } from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a completed handler reports a duration of zero or more across a wall clock stepped back an hour', async () => {
  const wall = Date.now.bind(Date);
  let clock: jest.SpyInstance<number, []> | undefined;
  const { events, observer } = recorder();
  const inbox = makeInbox(t.prisma, {
    observer,
    worker: { concurrency: 1, maxAttempts: 1 },
    handlers: {
      orders: async () => {
        clock = jest.spyOn(Date, 'now').mockImplementation(() => wall() - 3_600_000);
      },
    },
  });
  try {
    await inbox.accept(message());
    await inbox.runOnce();
  } finally {
    clock?.mockRestore();
    await inbox.close();
  }
  const completed = events.find((event) => event.type === 'completed');
  expect(completed).toMatchObject({ type: 'completed' });
  const { durationMs } = completed as { durationMs: number };
  expect(durationMs).toBeGreaterThanOrEqual(0);
  expect(durationMs).toBeLessThan(3_600_000);
});
