/**
 * review42: records of a transactional producer (the official Java client, as
 * foreignProducer.test.ts writes them), read by attachKafkaConsumer on both clients.
 *
 * 1. Two transactions of one producer aborted back to back, then a committed one.
 *    What happened (@platformatic/kafka): the record of the FIRST aborted transaction is stored
 *    in the inbox. The client's read_committed filter (Consumer #filterUncommittedMessages)
 *    keeps one aborted range per producer id: the second aborted transaction of the same
 *    producer in one fetch response replaces the first one's range, so the first one's records
 *    are delivered as if committed. kafkajs (and the Java client) skip both.
 *    What should happen: no record of an aborted transaction is ever accepted (the README and
 *    foreignProducer.test.ts promise it on both clients).
 *    Fix direction: ferry filters aborted records itself for @platformatic/kafka (it already
 *    sees every fetch response on the diagnostics channel: keep the abortedTransactions list
 *    per partition and drop a record of an aborted producer id between its firstOffset and that
 *    producer's next ABORT marker, as kafkajs's filterAbortedMessages does), or the client's
 *    filter is fixed to keep a list of ranges per producer.
 *
 * 2. A partition that ends with a transaction marker (every topic a transactional producer
 *    writes ends so).
 *    What happened (@platformatic/kafka): the consumer commits the offset after the last record,
 *    which is the marker's own offset, never the end offset: the `lag` event stays at 1 and the
 *    group's committed offset stays one behind the end for ever (an operator's lag alert never
 *    clears). kafkajs commits past trailing control records (DriverConsumer.commitThrough says
 *    it must: "past trailing control records when `last` ends the batch"), lag 0.
 *    What should happen: the same on both clients: committed offset = end offset, lag 0.
 *    Fix direction: in PlatformaticConsumer.batch().commitThrough, when `last` ends what was
 *    fetched of the partition, commit the stream's next fetch offset for it (the client's
 *    offsetsToFetch, set past the control batch) instead of last.offset + 1.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { ConsumerHarness } from './consumerHarness';
import { produceWithJava } from './javaProducer';
import { committedOffsets, endOffsets, waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

const ID = FERRY_HEADERS.messageId;

function settled(events: readonly TransportConsumerEvent[]): number {
  return events.reduce((sum, event) => sum + (event.type === 'settled' ? event.count : 0), 0);
}

describe('review42: transactional producers', () => {
  test('two aborted transactions of one producer in a row: neither is ever accepted', async () => {
    const topic = await harness.topicPair('r42-two-aborts');
    await produceWithJava(topic, [
      { mode: 'abort', value: '{"n":1}', headers: [[ID, 'aborted-1']] },
      { mode: 'abort', value: '{"n":2}', headers: [[ID, 'aborted-2']] },
      { mode: 'commit', value: '{"n":3}', headers: [[ID, 'committed']] },
      { value: '{"n":4}', headers: [[ID, 'last']] },
    ]);
    const { groupId } = await harness.start(topic, 'r42-two-aborts');
    await harness.waitFullyCommitted(groupId, topic);

    expect((await harness.acceptor.rows('r42-two-aborts')).map((row) => row.messageId)).toEqual([
      'committed',
      'last',
    ]);
  });

  test('a partition that ends with a commit marker is committed to its end offset, lag 0', async () => {
    const topic = await harness.topicPair('r42-marker-end');
    await produceWithJava(topic, [
      { value: '{"n":1}', headers: [[ID, 'plain']] },
      { mode: 'commit', value: '{"n":2}', headers: [[ID, 'committed']] },
    ]);
    const { groupId, events } = await harness.start(topic, 'r42-marker-end');
    // Two records to settle; the commit of the chunk resolved before `settled` is emitted.
    await waitFor(
      () => settled(events) >= 2,
      () => `settled ${settled(events)} of 2`,
    );

    expect((await harness.acceptor.rows('r42-marker-end')).map((row) => row.messageId)).toEqual([
      'plain',
      'committed',
    ]);
    const [committed, end] = await Promise.all([
      committedOffsets(harness.connection, groupId, topic),
      endOffsets(harness.connection, topic),
    ]);
    // Records at 0 and 1, the commit marker at 2: the end offset is 3.
    expect(end.get(0)).toBe('3');
    expect(committed.get(0)).toBe(end.get(0));
    const lags = events.filter((event) => event.type === 'lag');
    expect(lags[lags.length - 1]).toMatchObject({ type: 'lag', lag: 0 });
  });
});
