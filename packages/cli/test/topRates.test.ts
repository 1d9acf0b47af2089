/**
 * `ferry top`'s sent/s is the difference of two `sent` counts, a stock,
 * not a flow. A purge between two refreshes (nothing published) shows a negative send rate; beyond
 * 10,000 SENT rows the count is an estimate (sentEstimated) whose statistics lag and floor (10,001)
 * make the same difference jump, and the line does not say the rate is estimated.
 *
 * Expected: no negative send rate when nothing was published (a rate from a flow, e.g. published_at
 * within the interval, or '-' when the count went down or is an estimate).
 */
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a purge between two refreshes does not show as a negative send rate', async () => {
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at, created_at)
     SELECT gen_random_uuid(), 'top.sent', '{}', 5, 'SENT', now() - interval '2 days', now() - interval '3 days'
     FROM generate_series(1, 500)`,
  );
  const io = captureIo();
  const running = runCli(['top', '--iterations', '2', '--interval', '2s', '--database-url', t.url], io, {});
  while (io.lines.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
  await t.db.execute(`DELETE FROM outbox_events WHERE status = 'SENT'`); // the operator's purge
  expect(await running).toBe(0);
  const rate = /sent\/s=(\S+)/.exec(io.lines[1] ?? '')?.[1];
  expect(rate === '-' || Number(rate) >= 0).toBe(true);
});
