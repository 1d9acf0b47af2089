/**
 * The outbox metrics fed by a real relay on PostgreSQL (observer: metrics.outbox), scraped over
 * HTTP: publish outcomes, FAILED reasons, latency, cycles and the circuit agree with what the
 * relay did and with the rows, and no label carries an event id.
 */
import pino from 'pino';
import { createRelay, emitMany } from '@ferry/core';
import { createFerryMetrics, serveMetrics, type MetricsServer } from '@ferry/core/metrics';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { scrape } from '../../../../test-support/prometheusText';
import { waitFor } from '../outbox/helpers';

const silent = pino({ level: 'silent' });
let t: TestDatabase;
const servers: MetricsServer[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await t.drop();
});

async function serve(metrics: ReturnType<typeof createFerryMetrics>): Promise<string> {
  const server = await serveMetrics({ registry: metrics.registry, port: 0 });
  servers.push(server);
  return server.url;
}

it('counts sent, retried and FAILED events by type, their latency and the relay cycles, as the rows show them', async () => {
  const metrics = createFerryMetrics({ stats: { db: t.db, cacheMs: 0 } });
  const refusedOnce = new Set<string>();
  const publisher = new InMemoryPublisher({
    decide: (message) => {
      if (message.type === 'invoice.rejected') return { permanent: 'schema refused' };
      if (message.type === 'invoice.flaky' && !refusedOnce.has(message.id)) {
        refusedOnce.add(message.id);
        return { retryable: 'nack' };
      }
      return 'sent';
    },
  });
  const { ids } = await emitMany(t.db, [
    { type: 'order.placed', payload: { n: 1 } },
    { type: 'order.placed', payload: { n: 2 } },
    { type: 'order.placed', payload: { n: 3 } },
    { type: 'invoice.flaky', payload: {} },
    { type: 'invoice.rejected', payload: {} },
  ]);
  const relay = createRelay({
    db: t.db,
    publisher,
    logger: silent,
    observer: metrics.outbox,
    options: { retry: { initialDelay: 0 } },
  });
  let cycles = 0;
  await waitFor(async () => {
    cycles += 1;
    await relay.runOnce();
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status IN ('PENDING', 'PROCESSING')`,
    );
    return row?.n === 0;
  });

  const s = await scrape(await serve(metrics));
  const outcome = (eventType: string, o: string) =>
    s.value('ferry_outbox_publish_outcomes_total', { event_type: eventType, outcome: o });
  expect([
    outcome('order.placed', 'sent'),
    outcome('invoice.flaky', 'retry'),
    outcome('invoice.flaky', 'sent'),
    outcome('invoice.rejected', 'failed'),
  ]).toEqual([3, 1, 1, 1]);
  expect(s.value('ferry_outbox_failed_total', { event_type: 'invoice.rejected', reason: 'permanent' })).toBe(
    1,
  );
  expect(s.value('ferry_outbox_publish_latency_seconds_count', { event_type: 'order.placed' })).toBe(3);
  expect(
    s.value('ferry_outbox_publish_latency_seconds_bucket', { event_type: 'order.placed', le: '+Inf' }),
  ).toBe(3);
  expect(s.value('ferry_outbox_relay_cycle_duration_seconds_count')).toBe(cycles);
  expect(s.value('ferry_outbox_claimed_total')).toBe(6);
  expect(s.value('ferry_outbox_events', { status: 'SENT' })).toBe(4);
  expect(s.value('ferry_outbox_events', { status: 'FAILED' })).toBe(1);
  expect(s.value('ferry_outbox_relay_circuit_open')).toBe(0);
  const labels = s.samples.flatMap((sample) => Object.values(sample.labels));
  expect(labels.filter((value) => ids.includes(value))).toEqual([]);
});

it('shows the circuit open while the broker is unavailable and closed once a probe gets through', async () => {
  const metrics = createFerryMetrics();
  const url = await serve(metrics);
  await emitMany(t.db, [
    { type: 'o', payload: { n: 1 } },
    { type: 'o', payload: { n: 2 } },
  ]);
  let brokerUp = false;
  let now = 1_000_000;
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher({
      decide: () => (brokerUp ? 'sent' : { unavailable: 'connect ECONNREFUSED 127.0.0.1:9092' }),
    }),
    logger: silent,
    observer: metrics.outbox,
    options: { circuit: { openMs: 50, maxOpenMs: 50 } },
    clock: () => now,
  });
  await relay.runOnce();
  expect(relay.circuit).toBe('open');
  const open = await scrape(url);
  expect([
    open.value('ferry_outbox_relay_circuit_open'),
    open.value('ferry_outbox_relay_circuit_opened_total'),
  ]).toEqual([1, 1]);
  expect(open.find('ferry_outbox_publish_outcomes_total')).toEqual([]); // no message outcome spent

  brokerUp = true;
  now += 50;
  await relay.runOnce();
  expect(relay.circuit).toBe('closed');
  const closed = await scrape(url);
  expect([
    closed.value('ferry_outbox_relay_circuit_open'),
    closed.value('ferry_outbox_relay_circuit_opened_total'),
  ]).toEqual([0, 1]);
});
