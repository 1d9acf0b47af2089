/**
 * Review finding (failed first), review 88. A record over the inbox's maxPayloadBytes and within
 * 6 × it is parsed before it is measured (oversizeBodyFault), and a flat array of one-digit
 * numbers costs V8 tens of milliseconds per 100 KB to parse. Compressed, such records are tiny on
 * the wire: one record batch within the broker's 1 MiB holds hundreds of them, and one fetch
 * hands them over together. The consumer decoded a chunk (up to maxBatchSize records) in one turn
 * of the event loop: for seconds no timer of the process fired (the client's heartbeats among
 * them: the group evicts a member past its session timeout), no socket was read. The RabbitMQ
 * consumer gives the event loop its turns while it decodes (review 87, denseBodies); the Kafka
 * consumer now does the same through the same helper (core eventLoopTurns), on both clients, and
 * heartbeats at each turn (kafkajs sends a heartbeat only when asked: a chunk decoded for longer
 * than sessionTimeoutMs lost the member its partitions, and the chunk was read again).
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { CompressionTypes } from 'kafkajs';
import { ConsumerHarness } from './consumerHarness';
import { waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a timer set when a compressed batch of records slow to parse is received fires before the batch is offered to the inbox; every record is dead-lettered', async () => {
  const topic = await harness.topicPair('r88-dense', 1);
  const limit = harness.acceptor.maxPayloadBytes;
  const count = Math.floor((6 * limit - 8) / 2);
  const dense = `{"a":[${Array.from({ length: count }, () => '1').join(',')}]}`;
  expect(dense.length).toBeLessThanOrEqual(6 * limit);
  const ids = Array.from({ length: 40 }, (_, index) => `dense-${index}`);
  // One produce call, one gzip record batch: one fetch brings every record.
  await harness.raw.send({
    topic,
    compression: CompressionTypes.GZIP,
    messages: ids.map((id) => ({ value: dense, headers: { [FERRY_HEADERS.messageId]: id } })),
  });

  const events: TransportConsumerEvent[] = [];
  // acceptMany calls the acceptor had seen when the timer fired; undefined until it fires.
  let callsWhenFired: number | undefined;
  let timerSet = false;
  const { groupId } = await harness.start(topic, 'r88-dense', {
    observer: (event) => {
      events.push(event);
      if (event.type !== 'received' || timerSet) return;
      timerSet = true;
      const calls = harness.acceptor.calls;
      setTimeout(() => (callsWhenFired = harness.acceptor.calls - calls), 0);
    },
  });
  await harness.waitFullyCommitted(groupId, topic);
  const deadLettered = events.flatMap((event) =>
    event.type === 'dead-lettered' ? [`${event.messageId}: ${event.reason}`] : [],
  );
  // Once each, or twice should the group rebalance meanwhile (a loaded machine): read again.
  expect([...new Set(deadLettered)].sort()).toEqual(ids.map((id) => `${id}: payload_too_large`).sort());
  await waitFor(
    () => callsWhenFired !== undefined,
    () => 'the timer to fire',
  );
  // Fired while the batch was decoded: before its acceptMany.
  expect(callsWhenFired).toBe(0);
}, 120_000);
