/**
 * Review 104 (failed first): ferry's metrics cannot be taken off a registry, so a hot reload, or
 * an application built twice in one process (a NestJS e2e test's beforeEach), cannot make them
 * again on the same registry.
 *
 * What I did: createFerryMetrics on prom-client's global `register` (as the README says to serve
 * them beside collectDefaultMetrics()), with stats on real PostgreSQL; the application shut down
 * (its pool ended) and was built again: createFerryMetrics on the same registry.
 * What happened: the second call threw FERRY_CONFIG_INVALID "already holds a metric named
 * ferry_outbox_publish_outcomes_total", and nothing ferry returns can remove them: the only ways
 * out were `register.clear()` (the application's own metrics and the default ones gone too) or
 * removing ferry's names one by one. Kept, the first set's stats collectors read through the ended
 * pool on every scrape, counting ferry_stats_scrape_errors_total and logging a warning for good.
 * What should happen: FerryMetrics.close() takes its metrics off the registry (only its own:
 * the application's stay), safe twice, so the next createFerryMetrics registers again.
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { Counter, Registry } from 'prom-client';
import { fromPg } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { quietLogger as silent } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('close() takes ferry’s metrics off the registry; the rebuilt application registers them again', async () => {
  const registry = new Registry();
  const own = new Counter({ name: 'app_requests_total', help: 'the application’s', registers: [registry] });
  own.inc();
  const first = listened(new Pool({ connectionString: t.url, max: 1 }));
  const metrics = createFerryMetrics({ registry, stats: { db: fromPg(first), cacheMs: 0 }, logger: silent });
  metrics.inbox({ type: 'accepted', consumer: 'orders', messageId: 'm1', duplicate: false } as never);
  await first.end();

  await metrics.close();
  await metrics.close();
  expect(registry.getSingleMetric('app_requests_total')).toBe(own);
  expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(['app_requests_total']);

  const second = listened(new Pool({ connectionString: t.url, max: 1 }));
  try {
    const again = createFerryMetrics({ registry, stats: { db: fromPg(second), cacheMs: 0 }, logger: silent });
    // The first set's observers count into nothing: the rebuilt set is not changed by them.
    metrics.inbox({ type: 'accepted', consumer: 'orders', messageId: 'm2', duplicate: false } as never);
    const scrape = parsePrometheusText(await registry.metrics());
    expect(scrape.value('ferry_stats_scrape_errors_total', { source: 'outbox' })).toBeUndefined();
    expect(scrape.value('ferry_outbox_events', { status: 'PENDING' })).toBe(0);
    expect(scrape.find('ferry_inbox_acceptances_total')).toEqual([]);
    expect(scrape.value('app_requests_total')).toBe(1);
    await again.close();
  } finally {
    await second.end();
  }
});

it('close() leaves a metric of the same name another set registered after it', async () => {
  const registry = new Registry();
  const metrics = createFerryMetrics({ registry });
  for (const metric of registry.getMetricsAsArray()) registry.removeSingleMetric(metric.name);
  const later = createFerryMetrics({ registry });
  await metrics.close();
  expect(registry.getSingleMetric('ferry_outbox_claimed_total')).toBeDefined();
  await later.close();
  expect(registry.getMetricsAsArray()).toEqual([]);
});
