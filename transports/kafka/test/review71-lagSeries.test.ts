/**
 * Review 71, failing tests: `ferry_transport_consumer_lag` hides a stuck consumer.
 *
 * What I did: @ferry/core/metrics fed by real Kafka consumers (observer: metrics.transport),
 * scraped with prom-client's registry.metrics() and parsed. A consumer is made to fall behind
 * for real: its inbox accepts the first chunk (maxBatchSize 2 of 10 records, lag 8 reported),
 * then refuses every acceptance (FERRY_DATABASE_UNAVAILABLE: the partition seeks back and retries),
 * so its group stays 8 records behind.
 *
 * 1. Two consumers of one topic in one process, in two groups (a modular monolith: `billing` and
 *    `audit` each read `orders` with a group of their own), feeding one metrics object. The lag
 *    series is labelled transport / source / partition only, so both groups write the same
 *    series: the healthy group's later `lag 0` overwrote the stuck group's 8. The scrape says
 *    the partition is at lag 0 while a group is 8 records behind and not moving; an alert on
 *    `ferry_transport_consumer_lag > 0` never fires. (A rejoin of one group likewise drops the
 *    other group's series: keepAssigned knows no group.)
 * 2. One consumer, stuck 8 behind, closed. README: the lag is reported "for the partitions it is
 *    assigned (a rebalance drops the others)"; a closed consumer is assigned none, yet its last
 *    value stays in every scrape for the life of the process (next to `ferry_transport_connected`
 *    0): an alert on lag keeps firing for a consumer this process no longer runs, and the next
 *    owner's lag, reported by another process, is double-counted in a sum over instances.
 *
 * Fix direction: label the lag with the consumer's group (or the inbox consumer name), so
 * keepAssigned and the series are per group; drop a consumer's lag series on its `disconnected`
 * with reason `closed` (or `retryInMs` null), as `connected` takes it off the gauge.
 */
import { combineObservers, FerryError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { attachKafkaConsumer, KafkaPublisher, type KafkaInboxConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { fastGroup, groupLag, outboxMessage, testConnection, uniqueName, waitFor } from './support';

jest.setTimeout(120_000);

let harness: ConsumerHarness;
let publisher: KafkaPublisher;
const stuckConsumers: KafkaInboxConsumer[] = [];
beforeAll(async () => {
  harness = await ConsumerHarness.create();
  publisher = new KafkaPublisher(testConnection());
  await publisher.connect();
});
afterAll(async () => {
  await Promise.all(stuckConsumers.map((consumer) => consumer.close()));
  await publisher.close();
  await harness.close();
});

/** Publishes `count` records to partition 0 of `topic` (one ordering key). */
async function publishRecords(topic: string, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: 'one-key', payload: { index } }),
  );
  const outcomes = await publisher.publish(messages, new AbortController().signal);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
}

/**
 * Attaches a consumer (its own group) whose inbox accepts its first chunk and then refuses every
 * acceptance, and waits until it reported the lag that first commit left (> 0).
 */
async function startStuckConsumer(
  topic: string,
  metrics: FerryMetrics,
): Promise<{ consumer: KafkaInboxConsumer; groupId: string; lag: number }> {
  let open = true;
  const stuckInbox: InboxAcceptor = {
    maxPayloadBytes: harness.acceptor.maxPayloadBytes,
    async acceptMany(inputs) {
      if (!open) throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'the audit database is down');
      open = false;
      return harness.acceptor.acceptMany(inputs);
    },
  };
  const events: TransportConsumerEvent[] = [];
  const groupId = uniqueName('audit');
  const consumer = attachKafkaConsumer(stuckInbox, {
    connection: harness.connection,
    topic,
    groupId,
    consumer: 'audit',
    ...fastGroup,
    maxWaitTimeMs: 200,
    maxBatchSize: 2,
    retryBackoff: { initialMs: 50, maxMs: 200 },
    observer: combineObservers(metrics.transport, (event: TransportConsumerEvent) => {
      events.push(event);
    }),
  });
  stuckConsumers.push(consumer);
  await consumer.ready({ timeoutMs: 40_000 });
  let lag = 0;
  await waitFor(
    () => {
      const reported = events.find((event) => event.type === 'lag');
      lag = reported?.type === 'lag' ? reported.lag : 0;
      return (
        lag > 0 &&
        events.some((event) => event.type === 'acceptance-failed' || event.type === 'acceptance-unavailable')
      );
    },
    () =>
      `the audit consumer did not commit its first chunk and then get refused: ${JSON.stringify(events.slice(0, 8))}`,
  );
  return { consumer, groupId, lag };
}

it("two groups reading one topic in one process: the healthy group's lag hides the stuck group's", async () => {
  const metrics = createFerryMetrics();
  const topic = await harness.topicPair('review71-lag', 1);
  await publishRecords(topic, 10);

  const audit = await startStuckConsumer(topic, metrics);
  expect(audit.lag).toBe(8);

  // The billing group, healthy, reads the whole topic and reports its lag 0.
  const billingEvents: TransportConsumerEvent[] = [];
  const billing = await harness.start(topic, 'billing', {
    observer: combineObservers(metrics.transport, (event: TransportConsumerEvent) => {
      billingEvents.push(event);
    }),
  });
  await harness.waitFullyCommitted(billing.groupId, topic);
  await waitFor(
    () => billingEvents.some((event) => event.type === 'lag' && event.lag === 0),
    () => 'billing did not report lag 0',
  );

  // The audit group is still 8 records behind, for real.
  expect(await groupLag(harness.connection, audit.groupId, topic)).toBe(8);

  const scraped = parsePrometheusText(await metrics.registry.metrics());
  const lags = scraped.find('ferry_transport_consumer_lag', {
    transport: 'kafka',
    source: topic,
    partition: '0',
  });
  // Some series of the partition must show the audit group 8 behind.
  expect(lags.map((sample) => sample.value)).toContain(8);
});

it('a closed consumer stuck behind leaves its lag in every later scrape', async () => {
  const metrics = createFerryMetrics();
  const topic = await harness.topicPair('review71-closed', 1);
  await publishRecords(topic, 10);

  const audit = await startStuckConsumer(topic, metrics);
  expect(audit.lag).toBe(8);
  await audit.consumer.close();

  const scraped = parsePrometheusText(await metrics.registry.metrics());
  const labels = { transport: 'kafka', source: topic };
  expect(scraped.value('ferry_transport_connected', labels)).toBe(0);
  // The consumer is assigned no partition any more: no lag of it is reported.
  expect(scraped.find('ferry_transport_consumer_lag', labels)).toEqual([]);
});
