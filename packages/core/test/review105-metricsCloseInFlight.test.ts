/**
 * Review 105 (failed first): FerryMetrics.close() resolves while a stats read is in flight, and
 * the stats collectors still read after it.
 *
 * What I did: createFerryMetrics with stats on a real pg pool (max 1, its one connection busy
 * with the application's work), a scrape started, then the shutdown review 104 wrote close()
 * for: `await metrics.close()`, the pool ended. Also: the registry served through
 * `Registry.merge` (prom-client's way of serving two registries at one endpoint), scraped after
 * close().
 * What happened: close() resolved at once; the scrape's reads went on after it, through the pool
 * the application then ended: "ferry metrics: stats read failed" (FERRY_CLOSED) logged and
 * ferry_stats_scrape_errors_total counted at every such shutdown. The merged registry still
 * holds the closed set's gauges: each later scrape read the ended pool and warned again.
 * What should happen: close() resolves once no stats read is running, and none starts after it
 * (a scrape of a closed set's gauges reports their last values); the pool can then be ended.
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { Registry } from 'prom-client';
import { fromPg, type Logger } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function warnings(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const none = () => undefined;
  return {
    logger: {
      warn: (fields: object | string, message?: string) => {
        lines.push(String(message ?? fields));
      },
      error: none,
      info: none,
      debug: none,
    },
    lines,
  };
}

it('close() waits for the stats reads in flight; none starts after it', async () => {
  const registry = new Registry();
  const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  const { logger, lines } = warnings();
  const metrics = createFerryMetrics({ registry, stats: { db: fromPg(pool), cacheMs: 0 }, logger });
  const merged = Registry.merge([registry]);
  const held = await pool.connect();
  let scrape: Promise<string>;
  try {
    scrape = registry.metrics(); // its reads wait for the busy connection
    const closing = metrics.close();
    held.release();
    await closing;
  } finally {
    await pool.end();
  }
  const text = parsePrometheusText(await scrape);
  expect(text.value('ferry_outbox_events', { status: 'PENDING' })).toBe(0);
  expect(text.find('ferry_stats_scrape_errors_total')).toEqual([]);
  // The closed set's gauges, still held by the merged registry: their last values, no read.
  const later = parsePrometheusText(await merged.metrics());
  expect(later.value('ferry_outbox_events', { status: 'PENDING' })).toBe(0);
  expect(later.find('ferry_stats_scrape_errors_total')).toEqual([]);
  expect(lines).toEqual([]);
});
