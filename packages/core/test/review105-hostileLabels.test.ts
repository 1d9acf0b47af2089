/**
 * Review 105 (failed first): ferry's metrics observers throw for a label value they cannot read
 * as text (review 104 noted it and left it).
 *
 * What I did: fed createFerryMetrics' observers the events a third party's transport (or any
 * JavaScript caller) may hand them, with a label value that is an object whose toString throws,
 * or an object without a prototype (no toString at all): an event type, a consumer, a transport,
 * a source, a destination; a Kafka-style lag event with such a group or partition, and a
 * `connected` event whose assignment lists something else than partition numbers.
 * What happened: each observer threw ("Cannot convert object to primitive value", the
 * toString's error, "includes is not a function"); the component's safeEmit logged a warning per
 * event and the event was not counted at all. values.ts says the observers never throw.
 * What should happen: the event is counted, a label that cannot be read as text as `other`, and
 * the observer returns.
 */
import { Registry } from 'prom-client';
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText, type Scrape } from '../../../test-support/prometheusText';

const unreadable: [string, unknown][] = [
  [
    'toString throws',
    {
      toString: () => {
        throw new Error('no text');
      },
    },
  ],
  ['without a prototype', Object.create(null)],
];

async function scrapeOf(metrics: FerryMetrics): Promise<Scrape> {
  return parsePrometheusText(await metrics.registry.metrics());
}

describe.each(unreadable)('a label value %s', (_name, value) => {
  it('outbox: counted under event_type other', async () => {
    const metrics = createFerryMetrics({ registry: new Registry() });
    expect(() =>
      metrics.outbox({ type: 'sent', ids: ['a'], eventType: value, durationMs: 5 } as never),
    ).not.toThrow();
    expect(() => metrics.outbox({ type: 'infrastructure-error', operation: value } as never)).not.toThrow();
    const scrape = await scrapeOf(metrics);
    expect(
      scrape.value('ferry_outbox_publish_outcomes_total', { event_type: 'other', outcome: 'sent' }),
    ).toBe(1);
    expect(
      scrape.value('ferry_infrastructure_errors_total', { component: 'outbox', operation: 'other' }),
    ).toBe(1);
  });

  it('inbox: counted under consumer other', async () => {
    const metrics = createFerryMetrics({ registry: new Registry() });
    expect(() =>
      metrics.inbox({ type: 'accepted', consumer: value, duplicate: false } as never),
    ).not.toThrow();
    const scrape = await scrapeOf(metrics);
    expect(scrape.value('ferry_inbox_acceptances_total', { consumer: 'other' })).toBe(1);
  });

  it('transport: counted under transport, source and destination other; lag and assignment too', async () => {
    const metrics = createFerryMetrics({ registry: new Registry() });
    const observe = (event: Record<string, unknown>) =>
      expect(() => metrics.transport(event as never)).not.toThrow();
    observe({ type: 'received', transport: value, source: value, count: 2 });
    observe({ type: 'published', transport: 'kafka', destination: value, count: 1, durationMs: 3 });
    observe({
      type: 'lag',
      transport: value,
      source: 's',
      group: value,
      partition: value,
      instance: value,
      lag: 4,
    });
    observe({
      type: 'lag',
      transport: 'kafka',
      source: 's',
      group: 'g',
      partition: 0,
      instance: 'c1',
      lag: 7,
    });
    observe({ type: 'connected', transport: 'kafka', source: 's', instance: 'c1', assignment: { s: value } });
    observe({ type: 'connected', transport: 'kafka', source: 's', instance: 'c1', assignment: { s: 5 } });
    const scrape = await scrapeOf(metrics);
    expect(scrape.value('ferry_transport_received_total', { transport: 'other', source: 'other' })).toBe(2);
    expect(
      scrape.value('ferry_transport_published_total', { transport: 'kafka', destination: 'other' }),
    ).toBe(1);
    expect(
      scrape.value('ferry_transport_consumer_lag', {
        transport: 'other',
        group: '', // a group that is not text: as none (transport.ts)
        partition: 'other',
      }),
    ).toBe(4);
  });
});
