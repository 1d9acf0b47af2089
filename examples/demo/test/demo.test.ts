import { demoConfig } from '../src/config';
import { runDemo } from '../src/main';
import { dropDatabase } from '@ferry/testing';
import { scratchDatabaseUrl } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { kafkaLeftovers } from '../../test/kafkaLeftovers';

// A database of this test's own, so a concurrent `npm run demo` or example run cannot clash with it.
const databaseUrl = scratchDatabaseUrl('ferry_demo_t');
afterAll(() => dropDatabase(databaseUrl));

describe('the main demo', () => {
  it('accepts every order once, dead-letters the invalid ones, relays one event per order to Kafka, one trace per order', async () => {
    const config = { ...demoConfig(), databaseUrl, orders: 120, duplicates: 30, deadlineMs: 90_000 };
    const result = await runDemo(config);
    expect(result.disagreements).toEqual([]);
    // Its Kafka topics and consumer groups deleted when it closed (review 110).
    expect(await kafkaLeftovers(config.kafkaBrokers, config.runId)).toEqual([]);
    expect(result.counts).toMatchObject({
      offered: 120 + 30 + config.invalid,
      accepted: 120,
      duplicatesAbsorbed: 30,
      deadLettered: config.invalid,
      ordersWritten: 120,
      eventsOnKafka: 120,
    });
    expect(result.counts.deadLetterReasons).toEqual({
      missing_identity: 4,
      unparseable_body: 4,
      payload_too_large: 4,
    });
    expect(result.counts.latenciesMs).toHaveLength(120);

    // One trace per order, holding its whole path: RabbitMQ accept -> handler -> emit -> Kafka
    // publish -> Kafka accept -> downstream handler (checked span by span in src/traces.ts).
    expect(result.traces).toHaveLength(120);
    expect(result.traces.filter((t) => t.missing.length > 0)).toEqual([]);
    expect(result.traces.every((t) => /^[0-9a-f]{32}$/.test(t.traceId))).toBe(true);
    expect(new Set(result.traces.map((t) => t.traceId)).size).toBe(120);
    expect(result.counts).toMatchObject({ tracesComplete: 120, distinctTraces: 120 });

    // What its /metrics endpoint answered at the end, parsed as Prometheus text.
    expect(result.metrics.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const s = parsePrometheusText(result.metrics.scraped);
    const acceptances = (outcome: string) =>
      s.value('ferry_inbox_acceptances_total', { consumer: 'orders', outcome });
    expect([acceptances('accepted'), acceptances('duplicate')]).toEqual([120, 30]);
    expect(s.value('ferry_inbox_attempts_total', { consumer: 'orders', outcome: 'completed' })).toBe(120);
    expect(s.value('ferry_inbox_receipts', { consumer: 'orders', status: 'COMPLETED' })).toBe(120);
    expect(s.value('ferry_outbox_events', { status: 'SENT' })).toBe(120);
    expect(
      s.value('ferry_outbox_publish_outcomes_total', { event_type: 'order.accepted', outcome: 'sent' }),
    ).toBe(120);
    const queue = { transport: 'rabbitmq', source: expect.stringMatching(/^ferry\.demo\.orders\./) };
    const reasons = s
      .find('ferry_transport_dead_lettered_total')
      .map((sample) => [sample.labels.reason, sample.value, sample.labels]);
    expect(reasons.sort()).toEqual([
      ['missing_identity', 4, { ...queue, reason: 'missing_identity' }],
      ['payload_too_large', 4, { ...queue, reason: 'payload_too_large' }],
      ['unparseable_body', 4, { ...queue, reason: 'unparseable_body' }],
    ]);
    expect(s.find('ferry_transport_published_total')).toEqual([
      {
        name: 'ferry_transport_published_total',
        labels: { transport: 'kafka', destination: expect.any(String) },
        value: 120,
      },
    ]);
  }, 120_000);
});
