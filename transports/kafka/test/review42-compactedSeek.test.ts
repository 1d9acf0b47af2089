/**
 * review42: a compacted topic whose record at the retry offset is compacted away while the
 * partition waits for its retry.
 *
 * What I did: a compacted topic (cleanup.policy=compact, short segments, the cleaner allowed at
 * once); records r0 (key a), r1 (key a), r2 (key b). The inbox refuses work (the database is
 * down) when the consumer reads them, so the consumer seeks the partition back to offset 0 and
 * retries after its backoff, as documented. The log cleaner then removes r0 (key a has a newer
 * value, r1): offset 0 is no longer in the log. Then the database is back.
 *
 * What happened (@platformatic/kafka): nothing is ever accepted again from the partition.
 * ferry's PartitionGate (src/client/partitionGate.ts) admits nothing after a seek until a
 * record at exactly the sought offset arrives; a fetch from offset 0 now starts at offset 1,
 * which the gate takes for a fetch that moved the position forward, so it moves the position
 * back to 0 and drops the records, for ever (a busy re-fetch loop, the partition stalled).
 * kafkajs reads on from the first offset after 0 and accepts r1 and r2.
 *
 * What should happen: the same on both clients: after a seek to offset X, the first record at
 * X or after it (of a fetch that started at X) is admitted; a compacted (or retention-trimmed)
 * offset cannot stall a partition.
 *
 * Fix direction: the gate must tell a fetch that started at the sought offset from one that
 * was in flight before the seek (e.g. remember the fetch position it set and admit the first
 * record >= sought of a response requested at the sought offset: the client's diagnostics
 * channel shows the request's fetchOffset), instead of requiring offset === sought.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConsumerHarness } from './consumerHarness';
import { readBack, uniqueName, waitFor } from './support';
import { ensureTopics } from '../src';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  harness.acceptor.refuse = false;
  await harness.close();
});

const ID = FERRY_HEADERS.messageId;

describe('review42: compacted record at the offset a partition was sought back to', () => {
  test('the partition reads on from the next record that is still in the log', async () => {
    const topic = uniqueName('r42-compacted');
    harness.ownTopic(topic);
    harness.ownTopic(`${topic}.dlq`);
    await ensureTopics(harness.connection, [
      {
        topic,
        configs: {
          'cleanup.policy': 'compact',
          'segment.ms': '100',
          'min.cleanable.dirty.ratio': '0.01',
          'min.compaction.lag.ms': '0',
          'delete.retention.ms': '100',
        },
      },
      { topic: `${topic}.dlq` },
    ]);
    const send = (key: string, id: string) =>
      harness.raw.send({
        topic,
        messages: [{ partition: 0, key, value: JSON.stringify({ id }), headers: { [ID]: id } }],
      });

    harness.acceptor.refuse = true;
    const { events } = await harness.start(topic, 'r42-compacted');
    await send('a', 'r0');
    await send('a', 'r1');
    await waitFor(
      () => harness.acceptor.refusals >= 1,
      () => 'the consumer never offered r0',
    );
    // Rolls the segment holding r0 and r1 (segment.ms), so that the cleaner may compact it.
    await sleep(300);
    await send('b', 'r2');
    await sleep(300);
    await send('c', 'r3');

    // The log cleaner (log.cleaner.backoff.ms, 15 s by default) removes r0.
    await waitFor(
      async () => (await readBack(harness.connection, topic, 1))[0]?.offset !== '0',
      () => 'the log cleaner did not compact offset 0 away',
      90_000,
    );
    const callsBefore = harness.acceptor.calls;
    harness.acceptor.refuse = false;

    const rows = async () => (await harness.acceptor.rows('r42-compacted')).map((row) => row.messageId);
    await waitFor(
      async () => (await rows()).length >= 3,
      () =>
        `acceptMany called ${harness.acceptor.calls - callsBefore} times since the database came back; ` +
        `${events.filter((event) => event.type === 'received').length} batches received in all`,
      20_000,
    );
    expect(await rows()).toEqual(['r1', 'r2', 'r3']);
  }, 150_000);
});
