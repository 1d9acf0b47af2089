/**
 * Review 71, failing test: a database outage behind a Kafka consumer is not reported as one.
 *
 * What I did: a Kafka consumer whose inbox answers FERRY_DATABASE_UNAVAILABLE (the database is
 * down) for its first acceptances, then accepts, feeding @ferry/core/metrics; scraped with
 * prom-client's registry.metrics() and parsed.
 * What happened: every attempt during the outage is an `acceptance-failed` event, so
 * `ferry_transport_acceptance_failures_total{kind="failed"}` counts it and `kind="unavailable"`
 * stays absent, and no `acceptance-recovered` follows the outage. The observer shape every
 * transport shares (core's src/transport/events.ts) says `acceptance-unavailable` is "the
 * database cannot accept, or the inbox's admission limit refused" and `acceptance-recovered`
 * "acceptance works again"; core's docs/inbox.md says outages are reported so that "every
 * transport reports an outage alike"; RabbitMQ and SQS do (acceptHolding). On Kafka only the
 * admission limit is reported that way. An operator alerting on
 * `kind="unavailable"` for database outages (and on `kind="failed"` for poison / bisected
 * batches) is blind to the outage on Kafka and paged for poison instead; a dashboard of
 * acceptance-recovered never shows the Kafka consumer recovering.
 * What should happen: a batch-wide outage (isBatchWideFailure: FERRY_DATABASE_UNAVAILABLE,
 * FERRY_TIMEOUT, FERRY_CLOSED, ...) is `acceptance-unavailable` (attempt, delayMs) and the first
 * chunk committed after it `acceptance-recovered`, as for the admission limit; `acceptance-failed`
 * stays for a dead-letter send or other failures.
 * Fix direction: in retryLater, report a batch-wide acceptance failure as the admission path does
 * (this.refusals + acceptance-unavailable), so recovered() fires once the partition commits.
 */
import { combineObservers, FerryError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { createFerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { attachKafkaConsumer, KafkaPublisher } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { fastGroup, outboxMessage, testConnection, uniqueName, waitFor } from './support';

jest.setTimeout(120_000);

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

it('reports a database outage as acceptance-unavailable, then acceptance-recovered, as RabbitMQ and SQS do', async () => {
  const metrics = createFerryMetrics();
  const topic = await harness.topicPair('review71-outage', 1);
  const messages = Array.from({ length: 4 }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: 'one-key', payload: { index } }),
  );
  const outcomes = await publisher.publish(messages, new AbortController().signal);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);

  // The database is down for the first three acceptances, then back.
  let outageLeft = 3;
  const inbox: InboxAcceptor = {
    maxPayloadBytes: harness.acceptor.maxPayloadBytes,
    async acceptMany(inputs) {
      if (outageLeft > 0) {
        outageLeft -= 1;
        throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'connect ECONNREFUSED 127.0.0.1:5432');
      }
      return harness.acceptor.acceptMany(inputs);
    },
  };
  const events: TransportConsumerEvent[] = [];
  // harness.start attaches to harness.acceptor; this consumer needs the outage inbox instead.
  const groupId = uniqueName('group');
  const consumer = attachKafkaConsumer(inbox, {
    connection: harness.connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 200 },
    observer: combineObservers(metrics.transport, (event: TransportConsumerEvent) => {
      events.push(event);
    }),
  });
  try {
    await consumer.ready({ timeoutMs: 40_000 });
    await waitFor(
      () => events.some((event) => event.type === 'settled'),
      () => `the consumer did not get through the outage: ${JSON.stringify(events.map((e) => e.type))}`,
    );
    expect(outageLeft).toBe(0);

    const scraped = parsePrometheusText(await metrics.registry.metrics());
    const labels = { transport: 'kafka', source: topic };
    expect({
      failed: scraped.value('ferry_transport_acceptance_failures_total', { ...labels, kind: 'failed' }) ?? 0,
      unavailable:
        scraped.value('ferry_transport_acceptance_failures_total', { ...labels, kind: 'unavailable' }) ?? 0,
      recovered: events.some((event) => event.type === 'acceptance-recovered'),
    }).toEqual({ failed: 0, unavailable: 3, recovered: true });
  } finally {
    await consumer.close();
  }
});
