/**
 * The stats gauges read on scrape from real PostgreSQL, scraped over HTTP from serveMetrics and
 * parsed as Prometheus text: values match the tables, a hung or unreachable database costs a
 * scrape its deadline at most and is counted, and reads are cached and never pile up.
 */
import { Client, Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import pino from 'pino';
import { emitMany, fromPg, type SqlExecutor } from '@ferry/core';
import { createFerryMetrics, serveMetrics, type MetricsServer } from '@ferry/core/metrics';
import { closedPort } from '../../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { scrape } from '../../../../test-support/prometheusText';
import { makeInbox, message, waitFor } from '../inbox/helpers';

const silent = pino({ level: 'silent' });
let t: TestDatabase;
const servers: MetricsServer[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  // Outbox: acme PENDING x2 (one 90 s old), acme SENT, FAILED without tenant.
  const { ids } = await emitMany(t.db, [
    { type: 'order.placed', payload: {}, tenantId: 'acme' },
    { type: 'order.placed', payload: {}, tenantId: 'acme' },
    { type: 'order.placed', payload: {}, tenantId: 'acme' },
    { type: 'order.placed', payload: {}, tenantId: null },
  ]);
  await t.db.execute(
    `UPDATE outbox_events SET created_at = now() - interval '90 seconds' WHERE id = $1::uuid`,
    [ids[0]],
  );
  await t.db.execute(`UPDATE outbox_events SET status = 'SENT', published_at = now() WHERE id = $1::uuid`, [
    ids[2],
  ]);
  await t.db.execute(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'x' WHERE id = $1::uuid`,
    [ids[3]],
  );
  // Inbox: orders (acme) PENDING + COMPLETED, billing (global) PENDING 60 s old.
  const inbox = makeInbox(t.prisma, {
    global: 'shared',
    handlers: { orders: async () => {}, billing: async () => {} },
  });
  await inbox.accept(message({ consumer: 'orders', tenantId: 'acme' }));
  const done = await inbox.accept(message({ consumer: 'orders', tenantId: 'acme' }));
  const old = await inbox.accept(message({ consumer: 'billing', tenantId: null }));
  await t.db.execute(
    `UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = now() WHERE id = $1::uuid`,
    [done.record.id],
  );
  await t.db.execute(
    `UPDATE ferry_inbox_receipts SET created_at = now() - interval '60 seconds' WHERE id = $1::uuid`,
    [old.record.id],
  );
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await t.drop();
});

async function serve(stats: { db: SqlExecutor; timeoutMs?: number; cacheMs?: number }, tenantLabel = false) {
  const metrics = createFerryMetrics({ stats: { cacheMs: 0, ...stats }, tenantLabel, logger: silent });
  const server = await serveMetrics({ registry: metrics.registry, port: 0 });
  servers.push(server);
  return server;
}

/** Counts the queries that reach `db`. */
function counting(db: SqlExecutor): { db: SqlExecutor; queries: () => number } {
  let n = 0;
  return {
    db: { ...db, query: (text, values) => (n++, db.query(text, values)) },
    queries: () => n,
  };
}

describe('the stats gauges', () => {
  it('report outbox events by status, inbox receipts by consumer and status, and the oldest ages, in the text format', async () => {
    const server = await serve({ db: t.db });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const s = await scrape(server.url);
    const outbox = (status: string) => s.value('ferry_outbox_events', { status });
    expect([outbox('PENDING'), outbox('PROCESSING'), outbox('SENT'), outbox('FAILED')]).toEqual([2, 0, 1, 1]);
    expect(s.types.get('ferry_outbox_events')).toBe('gauge');
    expect(s.value('ferry_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(90);
    expect(s.value('ferry_outbox_expired_leases')).toBe(0);
    const receipts = (consumer: string, status: string) =>
      s.value('ferry_inbox_receipts', { consumer, status });
    expect([
      receipts('orders', 'PENDING'),
      receipts('orders', 'COMPLETED'),
      receipts('billing', 'PENDING'),
    ]).toEqual([1, 1, 1]);
    expect(receipts('orders', 'DEAD')).toBe(0);
    expect(
      s.value('ferry_inbox_oldest_unfinished_age_seconds', { consumer: 'billing' }),
    ).toBeGreaterThanOrEqual(60);
    expect(s.value('ferry_inbox_oldest_unfinished_age_seconds', { consumer: 'orders' })).toBeLessThan(60);
    expect(s.samples.filter((sample) => 'tenant' in sample.labels)).toEqual([]);
    expect(s.find('ferry_stats_scrape_errors_total')).toEqual([]);
  });

  it("label each tenant's series with tenantLabel ('' for rows without a tenant)", async () => {
    const s = await scrape((await serve({ db: t.db }, true)).url);
    expect(s.value('ferry_outbox_events', { tenant: 'acme', status: 'PENDING' })).toBe(2);
    expect(s.value('ferry_outbox_events', { tenant: 'acme', status: 'SENT' })).toBe(1);
    expect(s.value('ferry_outbox_events', { tenant: '', status: 'FAILED' })).toBe(1);
    expect(s.value('ferry_inbox_receipts', { consumer: 'orders', tenant: 'acme', status: 'COMPLETED' })).toBe(
      1,
    );
    expect(s.value('ferry_inbox_receipts', { consumer: 'billing', tenant: '', status: 'PENDING' })).toBe(1);
  });

  it('answer a scrape while the outbox table is locked: last values, a counted timeout, one read in flight, fresh values after', async () => {
    const server = await serve({ db: t.db, timeoutMs: 300 });
    // A loaded machine can miss 300 ms on a free table too: the first values, and the timeouts
    // counted until then, are taken as they come.
    const timeouts = (s: Awaited<ReturnType<typeof scrape>>) =>
      s.value('ferry_stats_scrape_errors_total', { source: 'outbox', reason: 'timeout' }) ?? 0;
    let before = 0;
    await waitFor('first values', async () => {
      const s = await scrape(server.url);
      before = timeouts(s);
      return s.value('ferry_outbox_events', { status: 'PENDING' }) === 2;
    });
    const locker = listened(new Client({ connectionString: t.url }));
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
      const during = await scrape(server.url); // resolves while the lock is held
      expect(timeouts(during)).toBe(before + 1);
      expect(during.value('ferry_outbox_events', { status: 'PENDING' })).toBe(2);
      expect(during.value('ferry_inbox_receipts', { consumer: 'orders', status: 'PENDING' })).toBe(1);
      const again = await scrape(server.url);
      expect(timeouts(again)).toBe(before + 2);
      const [blocked] = (
        await locker.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%outbox_events%'`,
        )
      ).rows;
      expect(blocked?.n).toBe(1);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: {}, tenantId: 'acme' }]);
    await waitFor('fresh values', async () => {
      const s = await scrape(server.url);
      return s.value('ferry_outbox_events', { status: 'PENDING' }) === 3;
    });
    await t.db.execute('DELETE FROM outbox_events WHERE id = $1::uuid', [ids[0]]);
  });

  it('answer with a counted error when the database is unreachable', async () => {
    const pool = listened(
      new Pool({ connectionString: `postgresql://postgres@127.0.0.1:${await closedPort()}/none` }),
    );
    try {
      const s = await scrape((await serve({ db: fromPg(pool) })).url);
      expect(s.value('ferry_stats_scrape_errors_total', { source: 'outbox', reason: 'error' })).toBe(1);
      expect(s.value('ferry_stats_scrape_errors_total', { source: 'inbox', reason: 'error' })).toBe(1);
      expect(s.types.get('ferry_outbox_events')).toBe('gauge');
    } finally {
      await pool.end();
    }
  });

  it('read the tables once per cacheMs, however many scrapes', async () => {
    const { db, queries } = counting(t.db);
    const server = await serve({ db, cacheMs: 600_000 });
    for (let i = 0; i < 3; i++) await scrape(server.url);
    await Promise.all([scrape(server.url), scrape(server.url)]);
    // One outbox read and one inbox read, each one statement (one snapshot): the unfinished
    // statuses and the SENT / COMPLETED rows (exact, the tables being small).
    expect(queries()).toBe(2);
  });
});
