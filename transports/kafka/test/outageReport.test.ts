/**
 * A database outage behind a Kafka consumer, as every transport reports it (review 71): the
 * outage is logged at warn once when it begins, each further retry at debug, the recovery at
 * info (core's outageReport, acceptHolding's words); and a record read again after the
 * partition was sought back is no new receipt: `received` counts each record once.
 * platformatic/outageReport.test.ts runs it on @platformatic/kafka.
 */
import pino from 'pino';
import { FerryError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, KafkaPublisher } from '../src';
import { ConsumerHarness, eventSum } from './consumerHarness';
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

const LEVELS: Record<number, string> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

it('logs the outage at warn once, each retry at debug, the recovery at info, and counts each record received once', async () => {
  const topic = await harness.topicPair('outage-report', 1);
  const records = 6;
  const messages = Array.from({ length: records }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: 'one-key', payload: { index } }),
  );
  const outcomes = await publisher.publish(messages, new AbortController().signal);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);

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
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const events: TransportConsumerEvent[] = [];
  const groupId = uniqueName('group');
  const consumer = attachKafkaConsumer(inbox, {
    connection: harness.connection,
    topic,
    groupId,
    consumer: 'billing',
    logger,
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 200 },
    observer: (event) => void events.push(event),
  });
  try {
    await consumer.ready({ timeoutMs: 40_000 });
    await harness.waitFullyCommitted(groupId, topic);
    await waitFor(
      () => eventSum(events, 'settled') === records,
      () => `settled ${eventSum(events, 'settled')} of ${records}`,
    );

    const outage = lines
      .filter((line) => line.msg.includes(`${topic}[0]`) && line.msg.includes('acceptance'))
      .map((line) => LEVELS[line.level]);
    expect(outage).toEqual(['warn', 'debug', 'debug', 'info']);
    expect(
      events
        .filter((event) => event.type.startsWith('acceptance-'))
        .map((event) => [
          event.type,
          event.type === 'acceptance-unavailable' ? event.attempt : null,
          event.type === 'acceptance-recovered' ? event.failures : null,
        ]),
    ).toEqual([
      ['acceptance-unavailable', 1, null],
      ['acceptance-unavailable', 2, null],
      ['acceptance-unavailable', 3, null],
      ['acceptance-recovered', null, 3],
    ]);
    // Read four times (three seek-backs), received once.
    expect([eventSum(events, 'received'), eventSum(events, 'accepted'), eventSum(events, 'settled')]).toEqual(
      [records, records, records],
    );
  } finally {
    await consumer.close();
  }
});
