/**
 * Review finding (failed first): two relays in one process (e.g. one per broker) fed into one
 * createFerryMetrics, as its README's "observer: metrics.outbox" invites. The circuit gauge had
 * no label telling the relays apart and every relay's event set it: one relay closing its
 * circuit showed 0 while the other's was still open (its broker down, claiming paused). The
 * gauge now counts the relays whose circuit is open.
 */
import pino from 'pino';
import { createRelay, emitMany, type OutboxEvent } from '@ferry/core';
import { createFerryMetrics, serveMetrics, type MetricsServer } from '@ferry/core/metrics';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { scrape } from '../../../../test-support/prometheusText';

const silent = pino({ level: 'silent' });
let t: TestDatabase;
let server: MetricsServer | undefined;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await server?.close();
  await t.drop();
});

it('the circuit gauge shows an open circuit while any relay of the process has one open', async () => {
  const metrics = createFerryMetrics();
  server = await serveMetrics({ registry: metrics.registry, port: 0 });
  await emitMany(t.db, [
    { type: 'o', payload: { n: 1 } },
    { type: 'o', payload: { n: 2 } },
  ]);
  // Each relay its own clock: A's open interval has not run out when B's has.
  const clocks = { a: 1_000_000, b: 1_000_000 };
  const down = { unavailable: 'connect ECONNREFUSED 127.0.0.1:5672' } as const;
  const relayFor = (clock: 'a' | 'b', decide: () => 'sent' | typeof down) =>
    createRelay({
      db: t.db,
      publisher: new InMemoryPublisher({ decide }),
      logger: silent,
      observer: metrics.outbox,
      options: { circuit: { openMs: 50, maxOpenMs: 50 } },
      clock: () => clocks[clock],
    });
  // Relay A's broker stays down; relay B's comes back.
  let aUp = false;
  const a = relayFor('a', () => (aUp ? 'sent' : down));
  let bUp = false;
  const b = relayFor('b', () => (bUp ? 'sent' : down));

  await a.runOnce();
  await b.runOnce();
  expect([a.circuit, b.circuit]).toEqual(['open', 'open']);
  expect((await scrape(server.url)).value('ferry_outbox_relay_circuit_open')).toBe(2);

  bUp = true;
  clocks.b += 50;
  await b.runOnce();
  expect([a.circuit, b.circuit]).toEqual(['open', 'closed']);

  const text = await scrape(server.url);
  // One relay of the process still cannot publish: the gauge must not say all is well.
  expect(text.value('ferry_outbox_relay_circuit_open')).toBe(1);

  // A's probe fails: its circuit opens again, still one relay open.
  clocks.a += 50;
  await a.runOnce();
  expect(a.circuit).toBe('open');
  expect((await scrape(server.url)).value('ferry_outbox_relay_circuit_open')).toBe(1);
  expect((await scrape(server.url)).value('ferry_outbox_relay_circuit_opened_total')).toBe(3);

  aUp = true;
  clocks.a += 50;
  await a.runOnce();
  expect([a.circuit, b.circuit]).toEqual(['closed', 'closed']);
  expect((await scrape(server.url)).value('ferry_outbox_relay_circuit_open')).toBe(0);
  await Promise.all([a.close(), b.close()]);
});

it('a relay closed while its circuit is open leaves the circuit gauge (failed first)', async () => {
  // A relay closed during its broker's outage (a shutdown, a per-tenant relay removed) sent no
  // more events: the gauge counted its circuit open until the process ended.
  const metrics = createFerryMetrics();
  const events: OutboxEvent[] = [];
  await emitMany(t.db, [{ type: 'o', payload: { n: 3 } }]);
  let clock = 2_000_000;
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher({
      decide: () => ({ unavailable: 'connect ECONNREFUSED 127.0.0.1:5672' }),
    }),
    logger: silent,
    observer: (event) => {
      events.push(event);
      metrics.outbox(event);
    },
    options: { circuit: { openMs: 50, maxOpenMs: 50 } },
    clock: () => clock,
  });
  await relay.runOnce();
  expect(relay.circuit).toBe('open');
  expect(
    (await metrics.registry.getSingleMetric('ferry_outbox_relay_circuit_open')?.get())?.values[0]?.value,
  ).toBe(1);
  clock += 20;
  await relay.close();
  expect(
    (await metrics.registry.getSingleMetric('ferry_outbox_relay_circuit_open')?.get())?.values[0]?.value,
  ).toBe(0);
  expect(events.filter((e) => e.type === 'circuit-closed')).toEqual([
    { type: 'circuit-closed', openedForMs: 20, relayClosed: true },
  ]);
  // The opening is still counted; only the open circuit ended with its relay.
  expect(
    (await metrics.registry.getSingleMetric('ferry_outbox_relay_circuit_opened_total')?.get())?.values[0]
      ?.value,
  ).toBe(1);
});
