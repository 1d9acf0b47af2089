/**
 * Review 128: the bounded transport metric state of review 127 (a lag series sums at most
 * `maxLabelValues` partitions, a source counts at most `maxLabelValues` consumers) against a
 * hostile or buggy transport: consumers refused at the bound that later go down, partitions
 * refused while a series is full and a kept one revoked, a rebalance of a full series, odd event
 * fields, events after a close, a throwing logger, several metrics instances.
 *
 * Found: a consumer's lag was kept under the text of its `instance` (String) but forgotten by the
 * raw value, so a consumer whose `instance` is not a string (a number, or none at all: a third
 * party's transport written before `instance`) never had its lag removed by its close or by a
 * rebalance: a closed consumer's lag stayed in the series for good, and, since review 127, held
 * its places in a full series so that no later partition was ever counted there.
 * Location: packages/core/src/metrics/transport.ts (the observer's `instance`).
 */
import type { TransportEvent } from '@ferry/core/transport';
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { throwingLogger } from '../../../test-support/throwingLogger';
import { writtenLog } from '../../../test-support/writtenLog';

const kafka = { transport: 'kafka', source: 'orders' } as const;
const GROUP = 'billing';
/** A small bound: partition labels 0..2, partitions 3 and up share `other` (3 places). */
const BOUND = 3;

/** The warn lines of a written log that say `pattern`. */
const said = (log: ReturnType<typeof writtenLog>, pattern: RegExp): string[] =>
  log
    .text()
    .split('\n')
    .filter((line) => pattern.test(line));

const metricsOf = (): FerryMetrics =>
  createFerryMetrics({ maxLabelValues: BOUND, logger: writtenLog().logger });

/** Sends an event as a third party's transport could (any field of any type). */
const send = (metrics: FerryMetrics, event: Record<string, unknown>) =>
  metrics.transport(event as unknown as TransportEvent);

async function total(
  metrics: FerryMetrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return parsePrometheusText(await metrics.registry.metrics())
    .find(name, labels)
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function lagSeries(metrics: FerryMetrics): Promise<Record<string, number>> {
  return Object.fromEntries(
    parsePrometheusText(await metrics.registry.metrics())
      .find('ferry_transport_consumer_lag')
      .map((sample) => [sample.labels.partition ?? '', sample.value] as const),
  );
}

const connected = (metrics: FerryMetrics, instance: unknown, assignment?: Record<string, number[]>) =>
  send(metrics, { type: 'connected', ...kafka, instance, ...(assignment ? { assignment } : {}) });
/** A `lost` consumer retries; a `closed` one stopped for good. */
const down = (metrics: FerryMetrics, instance: unknown, reason: 'lost' | 'closed') => {
  const retryInMs = reason === 'lost' ? 1_000 : null;
  send(metrics, { type: 'disconnected', ...kafka, instance, reason, error: reason, retryInMs });
};
const lag = (metrics: FerryMetrics, instance: unknown, partition: unknown, value: unknown) =>
  send(metrics, { type: 'lag', ...kafka, instance, group: GROUP, partition, lag: value });

describe('consumers refused at the bound', () => {
  it('a refused consumer that goes down or closes leaves the counted ones exact', async () => {
    const metrics = metricsOf();
    for (const instance of ['c-1', 'c-2', 'c-3']) connected(metrics, instance);
    connected(metrics, 'refused');
    expect(await total(metrics, 'ferry_transport_connected')).toBe(3);
    down(metrics, 'refused', 'lost');
    connected(metrics, 'refused'); // not a reconnect: it was never counted
    down(metrics, 'refused', 'closed');
    expect(await total(metrics, 'ferry_transport_connected')).toBe(3);
    expect(await total(metrics, 'ferry_transport_reconnects_total')).toBe(0);
    down(metrics, 'c-1', 'lost');
    connected(metrics, 'c-1');
    expect(await total(metrics, 'ferry_transport_reconnects_total')).toBe(1);
    connected(metrics, 'uncounted'); // refused: the source is full
    down(metrics, 'c-2', 'closed');
    // A place is free, but the refused consumer is not remembered: counted once it connects again.
    expect(await total(metrics, 'ferry_transport_connected')).toBe(2);
    connected(metrics, 'late');
    expect(await total(metrics, 'ferry_transport_connected')).toBe(3);
    connected(metrics, 'uncounted');
    expect(await total(metrics, 'ferry_transport_connected')).toBe(3);
    for (const instance of ['c-1', 'c-3', 'late', 'refused', 'uncounted']) down(metrics, instance, 'closed');
    expect(await total(metrics, 'ferry_transport_connected')).toBe(0);
    expect(await total(metrics, 'ferry_transport_reconnects_total')).toBe(1);
  });

  it('one instance name in two sources is counted in each, and closed in each apart', async () => {
    const metrics = metricsOf();
    connected(metrics, 'c-1');
    send(metrics, { type: 'connected', transport: 'kafka', source: 'invoices', instance: 'c-1' });
    down(metrics, 'c-1', 'closed');
    expect(await total(metrics, 'ferry_transport_connected', { source: 'orders' })).toBe(0);
    expect(await total(metrics, 'ferry_transport_connected', { source: 'invoices' })).toBe(1);
  });
});

describe('a full lag series', () => {
  /** c-1 reports partitions 0..6 of `orders`: 3..5 fill the `other` series, 6 is refused. */
  function full(): FerryMetrics {
    const metrics = metricsOf();
    connected(metrics, 'c-1', { orders: [0, 1, 2, 3, 4, 5, 6] });
    for (let partition = 0; partition <= 6; partition += 1) lag(metrics, 'c-1', partition, 10 ** partition);
    return metrics;
  }

  it('a revoked partition frees its place for the next report, and leaves the sum', async () => {
    const metrics = full();
    expect((await lagSeries(metrics)).other).toBe(1_000 + 10_000 + 100_000);
    connected(metrics, 'c-1', { orders: [0, 1, 2, 3, 5, 6] }); // 4 revoked
    expect((await lagSeries(metrics)).other).toBe(1_000 + 100_000);
    lag(metrics, 'c-1', 6, 7);
    expect((await lagSeries(metrics)).other).toBe(1_000 + 100_000 + 7);
    lag(metrics, 'c-1', 4, 1); // full again: refused
    expect((await lagSeries(metrics)).other).toBe(1_000 + 100_000 + 7);
  });

  it('a rebalance between two consumers of the group moves partitions without a stale lag', async () => {
    const metrics = full();
    // c-2 joins and reports 4 and 5 before c-1's rejoin: the entries become c-2's.
    connected(metrics, 'c-2', { orders: [4, 5, 6] });
    lag(metrics, 'c-2', 4, 40);
    lag(metrics, 'c-2', 5, 50);
    lag(metrics, 'c-2', 6, 60); // refused: full
    connected(metrics, 'c-1', { orders: [0, 1, 2, 3] });
    expect((await lagSeries(metrics)).other).toBe(1_000 + 40 + 50);
    down(metrics, 'c-1', 'closed');
    const afterClose = await lagSeries(metrics);
    expect(afterClose).toEqual({ other: 40 + 50 });
    lag(metrics, 'c-2', 6, 60);
    expect((await lagSeries(metrics)).other).toBe(40 + 50 + 60);
    down(metrics, 'c-2', 'closed');
    expect(await lagSeries(metrics)).toEqual({});
  });
});

describe('odd instance values', () => {
  it.each([
    ['a number', 7],
    ['none', undefined],
    ['null', null],
  ])(
    'a consumer whose instance is %s: its close removes its lag and frees its places',
    async (_, instance) => {
      const metrics = metricsOf();
      const partitions = [0, 1, 2, 3, 4, 5];
      connected(metrics, instance, { orders: partitions });
      for (const partition of partitions) lag(metrics, instance, partition, 5);
      const reported = { '0': 5, '1': 5, '2': 5, other: 15 };
      expect(await lagSeries(metrics)).toEqual(reported);
      down(metrics, instance, 'closed');
      // Received on main: every series as reported: kept under String(instance), never forgotten.
      expect(await lagSeries(metrics)).toEqual({});
      expect(await total(metrics, 'ferry_transport_connected')).toBe(0);
      lag(metrics, 'c-2', 6, 1);
      expect(await lagSeries(metrics)).toEqual({ other: 1 });
    },
  );

  it('a rebalance of a consumer whose instance is a number drops its revoked partitions', async () => {
    const metrics = metricsOf();
    connected(metrics, 7, { orders: [3, 4] });
    lag(metrics, 7, 3, 3);
    lag(metrics, 7, 4, 4);
    connected(metrics, 7, { orders: [3] });
    // Received on main: 7 (partition 4's lag left behind).
    expect(await total(metrics, 'ferry_transport_consumer_lag')).toBe(3);
  });
});

describe('hostile events', () => {
  it('odd fields, events after a close and a throwing logger never throw out of the observer', async () => {
    const throwing = throwingLogger();
    const metrics = createFerryMetrics({ maxLabelValues: 1, logger: throwing.logger });
    const odd: unknown[] = [
      NaN,
      -1,
      Infinity,
      -Infinity,
      2 ** 60,
      1e308,
      '3',
      '',
      null,
      undefined,
      {},
      Object.create(null),
      Symbol('s'),
      10n,
    ];
    expect(() => {
      for (const value of odd) {
        lag(metrics, value, value, value);
        lag(metrics, 'c-1', value, 1e308);
        connected(metrics, value, { orders: [value as number] });
        send(metrics, { type: 'connected', ...kafka, instance: 'c-1', assignment: value });
        down(metrics, value, 'lost');
        down(metrics, value, 'closed');
        send(metrics, {
          type: 'lag',
          transport: value,
          source: value,
          instance: value,
          group: value,
          partition: value,
          lag: 1,
        });
      }
      // After its close, a consumer's late events: counted as a new consumer's, never thrown.
      down(metrics, 'c-1', 'closed');
      lag(metrics, 'c-1', 0, 1);
      down(metrics, 'c-1', 'lost');
    }).not.toThrow();
    // Both bounds were reached: their warnings went to the broken logger, and were lost.
    expect(throwing.calls()).toBe(2);
    const scrape = parsePrometheusText(await metrics.registry.metrics());
    expect(scrape.find('ferry_transport_connected').every((s) => s.value >= 0)).toBe(true);
    expect(scrape.find('ferry_transport_consumer_lag').every((s) => s.value >= 0)).toBe(true);
  });

  it('the bound reached is said once per metrics instance and per bound', async () => {
    const first = writtenLog();
    const second = writtenLog();
    for (const { logger } of [first, second]) {
      const metrics = createFerryMetrics({ maxLabelValues: 1, logger });
      for (const instance of ['a', 'b', 'c']) {
        connected(metrics, instance);
        send(metrics, { type: 'connected', transport: 'kafka', source: 'invoices', instance });
        lag(metrics, instance, Number(instance.charCodeAt(0)), 1);
        lag(metrics, instance, 1_000 + instance.charCodeAt(0), 1);
      }
    }
    for (const log of [first, second]) {
      expect(said(log, /lag series/)).toHaveLength(1);
      expect(said(log, /consumers \(instances\)/)).toHaveLength(1);
    }
  });
});
