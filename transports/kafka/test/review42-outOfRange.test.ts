/**
 * review42: a group whose committed offset is no longer in the log.
 *
 * What I did: a topic with records r0..r3 (ferry's message id header), group G committed at
 * offset 1 (it had taken r0), then the records before offset 2 deleted (`kafka-delete-records`;
 * retention does the same to a group that stayed away longer than `retention.ms`, the common
 * case). Then attachKafkaConsumer for group G.
 *
 * What happened (@platformatic/kafka): every fetch of the partition fails with
 * OFFSET_OUT_OF_RANGE; the client throws it for the whole fetch response, the record stream
 * errors, ferry's consumer crashes into a new session, which fetches from the same committed
 * offset and crashes again, for ever: nothing of the topic is ever accepted again (and a fetch
 * covers every partition led by that broker, so the group's other partitions stall with it).
 * kafkajs resets the partition to its earliest offset (`fromBeginning`, ferry's default) and
 * accepts r2 and r3. The crash loop does not even back off: each new session joins the group
 * (onJoin resets `restarts`), so every restart waits the first step of `reconnectBackoff`
 * (38 sessions, each a group rebalance, in 20 s here).
 *
 * What should happen: the same on both clients: the partition restarts at its log start offset
 * when `fromBeginning` (else at its end), the records still in the log are accepted, and the
 * group commits to the end offset.
 *
 * Fix direction: in PlatformaticConsumer, before the stream starts (and on OFFSET_OUT_OF_RANGE
 * of a fetch), list the partitions' earliest/latest offsets and move a fetch position that is
 * out of range (stream.offsetsToFetch) to the log start (fromBeginning) or end; or catch the
 * error and restart the session with such a reset, instead of a crash the next session repeats.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from './consumerHarness';
import { uniqueName, waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

describe('review42: committed offset below the log start offset', () => {
  test('the consumer restarts the partition at its log start and accepts what is left', async () => {
    const topic = await harness.topicPair('r42-out-of-range');
    await harness.raw.send({
      topic,
      messages: ['r0', 'r1', 'r2', 'r3'].map((id, n) => ({
        partition: 0,
        value: JSON.stringify({ n }),
        headers: { [FERRY_HEADERS.messageId]: id },
      })),
    });
    const groupId = uniqueName('group');
    const admin = harness.connection.kafka.admin();
    await admin.connect();
    try {
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] });
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] });
    } finally {
      await admin.disconnect();
    }

    const { events } = await harness.start(topic, 'r42-out-of-range', { groupId });
    const rows = async () => (await harness.acceptor.rows('r42-out-of-range')).map((row) => row.messageId);
    await waitFor(
      async () => (await rows()).length >= 2,
      () =>
        `accepted none of r2, r3; disconnected ${events.filter((event) => event.type === 'disconnected').length} times`,
      20_000,
    );

    expect(await rows()).toEqual(['r2', 'r3']);
    await harness.waitFullyCommitted(groupId, topic);
  });
});
