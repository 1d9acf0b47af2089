/**
 * What a consumer keeps per partition (its retry count, its outage, its shrunk chunk size)
 * belongs to its ownership of the partition: a rebalance that moves the partition to another
 * member ends it. Kept, a partition that later comes back started from the old owner's counts:
 * an `acceptance-recovered` for an outage this member had long stopped seeing (review 71's
 * left item), and a first retry at the old backoff instead of the first step.
 */
import { FerryError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
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

/** Publishes `count` records under as many keys, so both partitions of `topic` get some. */
async function publishSpread(topic: string, count: number, round: string): Promise<void> {
  const messages = Array.from({ length: count }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: `${round}-${index}`, payload: { index } }),
  );
  const outcomes = await publisher.publish(messages, new AbortController().signal);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
}

/** How many partitions the member's latest `connected` event assigned it. */
function assigned(events: readonly TransportConsumerEvent[]): number {
  const joins = events.filter((event) => event.type === 'connected');
  const last = joins[joins.length - 1];
  if (last?.type !== 'connected' || last.assignment === undefined) return 0;
  return Object.values(last.assignment).reduce((total, partitions) => total + partitions.length, 0);
}

const ofType = (events: readonly TransportConsumerEvent[], type: TransportConsumerEvent['type']) =>
  events.filter((event) => event.type === type);

it('a partition that comes back after a rebalance brings no outage of its earlier ownership', async () => {
  const topic = await harness.topicPair('rebalance-state', 2);
  const groupId = uniqueName('group');
  let down = true;
  const inbox: InboxAcceptor = {
    maxPayloadBytes: harness.acceptor.maxPayloadBytes,
    async acceptMany(inputs) {
      if (down) throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'connect ECONNREFUSED 127.0.0.1:5432');
      return harness.acceptor.acceptMany(inputs);
    },
  };
  const events: TransportConsumerEvent[] = [];
  const first = attachKafkaConsumer(inbox, {
    connection: harness.connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 200 },
    observer: (event) => events.push(event),
  });
  try {
    await first.ready({ timeoutMs: 40_000 });
    await waitFor(
      () => assigned(events) === 2,
      () => `the first member was not assigned both partitions: ${JSON.stringify(events.slice(-6))}`,
    );
    await publishSpread(topic, 20, 'before');
    // Both partitions held by the outage (each one's first attempt).
    await waitFor(
      () =>
        ofType(events, 'acceptance-unavailable').filter(
          (e) => e.type === 'acceptance-unavailable' && e.attempt === 1,
        ).length >= 2,
      () => `both partitions were not held: ${JSON.stringify(events.slice(-6))}`,
    );

    // A second member of the group takes one partition; the first keeps the other.
    const second = await harness.start(topic, 'billing', { groupId });
    await waitFor(
      () => assigned(events) === 1,
      () => `the first member did not rejoin with one partition: ${JSON.stringify(events.slice(-6))}`,
    );
    down = false;
    await harness.waitFullyCommitted(groupId, topic);
    // The first member saw its own partition's outage end (and, when a retry of the moved
    // partition's chunk was still running as it left, that one's too).
    const recovered = ofType(events, 'acceptance-recovered').length;
    expect(recovered).toBeGreaterThanOrEqual(1);

    // The second member leaves: the first gets both partitions again and accepts new records.
    await second.handle.close();
    await waitFor(
      () => assigned(events) === 2,
      () => `the first member did not get both partitions back: ${JSON.stringify(events.slice(-6))}`,
    );
    await publishSpread(topic, 20, 'after');
    await harness.waitFullyCommitted(groupId, topic);

    // Nothing failed since: no outage of the partition's earlier ownership is reported over.
    expect(ofType(events, 'acceptance-recovered')).toHaveLength(recovered);
  } finally {
    await first.close();
  }
});
