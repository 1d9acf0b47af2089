/**
 * Review finding (failed first): `ferry top` takes a refresh whose outbox / inbox read failed ("outbox
 * unavailable", e.g. the database slow for one refresh) as a sample of 0 SENT / 0 COMPLETED, so
 * the next refresh shows the whole SENT history divided by the interval as sent/s: a spike of
 * thousands per second on the dashboard right after the blip, while nothing was published.
 */
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
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

it('a refresh after an unavailable one shows no send rate made of the whole history', async () => {
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at, created_at)
     SELECT gen_random_uuid(), 'top.sent', '{}', 5, 'SENT', now() - interval '2 days', now() - interval '3 days'
     FROM generate_series(1, 2000)`,
  );
  // Another session holds the outbox table for the first refresh: its reads miss the deadline.
  const blocker = listened(new Client({ connectionString: t.url }));
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
  const io = captureIo();
  const running = runCli(
    ['top', '--iterations', '3', '--interval', '2s', '--statement-timeout', '300ms', '--database-url', t.url],
    io,
    {},
  );
  try {
    while (io.lines.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }
  expect(await running).toBe(0);
  expect(io.lines[0]).toMatch(/outbox unavailable/);
  // Nothing is published during the test: every shown rate is '-' or 0.
  const rates = io.lines.map((line) => /sent\/s=(\S+)/.exec(line)?.[1]).filter((r) => r !== undefined);
  expect(rates.length).toBeGreaterThan(0);
  expect(rates.filter((r) => r !== '-' && Number(r) !== 0)).toEqual([]);
});
