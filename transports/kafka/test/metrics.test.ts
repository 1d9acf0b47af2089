/**
 * @ferry/core/metrics fed by a real Kafka consumer (observer: metrics.transport), scraped over
 * HTTP: deliveries received, accepted and settled per topic, and the consumer lag of every
 * partition, which is 0 once the group committed to the end offsets; no message id in a label.
 */
import { combineObservers } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { createFerryMetrics, serveMetrics } from '@ferry/core/metrics';
import { parsePrometheusText, scrape, type Scrape } from '../../../test-support/prometheusText';
import { KafkaPublisher } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { outboxMessage, testConnection, uniqueName, waitFor } from './support';

let harness: ConsumerHarness;
let publisher: KafkaPublisher;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
  publisher = new KafkaPublisher(testConnection());
  await publisher.connect();
});
afterAll(async () => {
  await publisher.close();
  await harness.close();
});

it('counts the deliveries of the topic and reports each partition lag, 0 once all is committed', async () => {
  const metrics = createFerryMetrics();
  const server = await serveMetrics({ registry: metrics.registry, port: 0 });
  try {
    const topic = await harness.topicPair('metrics', 2);
    const messages = Array.from({ length: 20 }, (_, index) =>
      outboxMessage({ destination: topic, orderingKey: `k${index % 4}`, payload: { index } }),
    );
    const outcomes = await publisher.publish(messages, new AbortController().signal);
    expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
    const groupId = uniqueName('group');
    await harness.start(topic, 'metrics', { groupId, observer: metrics.transport });
    await harness.waitFullyCommitted(groupId, topic);

    const labels = { transport: 'kafka', source: topic };
    let s: Scrape | undefined;
    await waitFor(
      async () => {
        s = await scrape(server.url);
        const lags = s.find('ferry_transport_consumer_lag', labels);
        return (
          s.value('ferry_transport_settled_total', labels) === 20 &&
          lags.length === 2 &&
          lags.every((lag) => lag.value === 0)
        );
      },
      () => 'the scrape did not show 20 settled deliveries and both partitions at lag 0',
    );
    if (!s) throw new Error('no scrape');
    expect(s.value('ferry_transport_received_total', labels)).toBe(20);
    expect(s.value('ferry_transport_accepted_total', labels)).toBe(20);
    expect(
      s
        .find('ferry_transport_consumer_lag', labels)
        .map((lag) => lag.labels.partition)
        .sort(),
    ).toEqual(['0', '1']);
    const ids = new Set(messages.map((message) => message.id));
    expect(s.samples.flatMap((sample) => Object.values(sample.labels)).filter((v) => ids.has(v))).toEqual([]);
  } finally {
    await server.close();
  }
});

it('counts no reconnect for a rebalance and drops the lag of the partition another member took', async () => {
  const metrics = createFerryMetrics();
  const events: TransportConsumerEvent[] = [];
  const topic = await harness.topicPair('rebalance', 2);
  const messages = Array.from({ length: 10 }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: `k${index % 4}`, payload: { index } }),
  );
  const outcomes = await publisher.publish(messages, new AbortController().signal);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
  const groupId = uniqueName('group');
  const observer = combineObservers(metrics.transport, (event: TransportConsumerEvent) => {
    events.push(event);
  });
  await harness.start(topic, 'metrics', { groupId, observer });
  await harness.waitFullyCommitted(groupId, topic);
  const labels = { transport: 'kafka', source: topic };
  const lagPartitions = async () =>
    parsePrometheusText(await metrics.registry.metrics())
      .find('ferry_transport_consumer_lag', labels)
      .map((lag) => lag.labels.partition)
      .sort();
  await waitFor(
    async () => (await lagPartitions()).length === 2,
    () => 'the lone member did not report the lag of both partitions',
  );

  // A second member joins the group: the first one is left with one partition.
  await harness.start(topic, 'metrics', { groupId });
  let owned: readonly number[] | undefined;
  await waitFor(
    () => {
      const joins = events.filter((e) => e.type === 'connected' && e.assignment !== undefined);
      const last = joins[joins.length - 1];
      owned = last?.type === 'connected' ? last.assignment?.[topic] : undefined;
      return joins.length >= 2 && owned?.length === 1;
    },
    () => 'the first member was not reassigned one partition',
  );
  expect(events.filter((e) => e.type === 'disconnected')).toEqual([]);
  const s = parsePrometheusText(await metrics.registry.metrics());
  expect(s.value('ferry_transport_reconnects_total', { transport: 'kafka', source: topic }) ?? 0).toBe(0);
  expect(await lagPartitions()).toEqual(owned!.map(String));
});
