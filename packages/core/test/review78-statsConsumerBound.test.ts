/**
 * Review 78: the README promises that, as label values come from data ("a delivery names its
 * consumer": an inbox without handlers accepts any), "each label name takes at most
 * `maxLabelValues` distinct values per `createFerryMetrics`, the first seen, shared by every
 * metric with that label; every later value is counted under `other` (totals stay exact)".
 *
 * The stats gauges `ferry_inbox_receipts`, `ferry_inbox_oldest_unfinished_age_seconds` and
 * `ferry_inbox_expired_leases` take their `consumer` label straight from the table's rows
 * (statsMetrics / inboxGauges in packages/core/src/metrics/stats.ts never see the label bound):
 * 150 consumers in the inbox make 150 consumer series per status on every scrape, whatever
 * maxLabelValues says. The registry grows with the data, as the bound was added to prevent.
 */
import pino from 'pino';
import { createFerryMetrics } from '@ferry/core/metrics';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { makeInbox, message } from './inbox/helpers';

jest.setTimeout(60_000);

const CONSUMERS = 150;
const BOUND = 100;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  // An inbox without handlers accepts deliveries for any consumer they name.
  const inbox = makeInbox(t.prisma, { global: 'shared' });
  await inbox.acceptMany(
    Array.from({ length: CONSUMERS }, (_, i) => message({ consumer: `tenant-${i}-orders`, tenantId: null })),
  );
});
afterAll(async () => {
  await t.drop();
});

it('the inbox stats gauges take at most maxLabelValues consumers, the rest counted under other', async () => {
  const metrics = createFerryMetrics({
    stats: { db: t.db, outbox: false, cacheMs: 0 },
    logger: pino({ level: 'silent' }),
  });
  const scraped = parsePrometheusText(await metrics.registry.metrics());
  const pending = scraped.find('ferry_inbox_receipts', { status: 'PENDING' });
  const consumers = new Set(pending.map((sample) => sample.labels.consumer));
  // Totals stay exact: every accepted receipt is still counted, `other` included.
  expect(pending.reduce((sum, sample) => sum + sample.value, 0)).toBe(CONSUMERS);
  // Received: 150 consumers (one series per consumer per status, 5 statuses: 750 series).
  expect(consumers.size).toBeLessThanOrEqual(BOUND + 1);
  expect(consumers).toContain('other');
  for (const name of ['ferry_inbox_oldest_unfinished_age_seconds', 'ferry_inbox_expired_leases']) {
    expect(new Set(scraped.find(name, {}).map((sample) => sample.labels.consumer)).size).toBeLessThanOrEqual(
      BOUND + 1,
    );
  }
});
