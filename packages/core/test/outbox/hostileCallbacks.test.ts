/**
 * The Publisher is the application's when it writes one for another broker. One whose publish()
 * never settles (and ignores its abort signal) while the lease renews fine must not hold the
 * relay for ever: past one lease duration the relay stops waiting, and the batch goes back as
 * retryable with last_error saying so (its retries spent, so FAILED in the end, never stuck).
 */
import { emitMany, type Publisher } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

test('a publisher that never settles, under a publishTimeout: runOnce() returns and the batch is retryable with its reason', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { n: 0 } },
    { type: 'b', payload: { n: 1 } },
  ]);
  const publisher: Publisher = { publish: () => new Promise(() => undefined) };
  // Without one, the publish holds its renewed claim until close() (review 118).
  const r = relay(t.db, publisher, {
    lease: { duration: 1_000, heartbeatInterval: 200 },
    publishTimeout: 1_000,
  });
  try {
    await r.runOnce();
  } finally {
    await r.close();
  }
  const rows = await t.db.query<{ status: string; retry_count: number; last_error: string | null }>(
    'SELECT status, retry_count, last_error FROM outbox_events WHERE id = ANY($1::uuid[])',
    [ids],
  );
  expect(rows).toEqual(
    ids.map(() => ({
      status: 'PENDING',
      retry_count: 1,
      last_error: expect.stringContaining('did not answer within publishTimeout'),
    })),
  );
});
