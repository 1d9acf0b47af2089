/**
 * Partitions consumed concurrently (`partitionsConsumedConcurrently`), one held by an outage:
 * the other commits to its end, the held one never commits past its first unaccepted record,
 * and once the outage ends every record is stored once (real Kafka and PostgreSQL).
 */
import { FerryError, type InboxAcceptor } from '@ferry/core';
import {
  attachKafkaConsumer,
  deleteGroups,
  topicPartitionOffsetIdentity,
  type KafkaInboxConsumer,
} from '../src';
import { kafkaClient } from './clients';
import { ConsumerHarness } from './consumerHarness';
import { committedOffsets, fastGroup, uniqueName, waitFor } from './support';

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

describe('attachKafkaConsumer with partitions in flight at once', () => {
  test('an outage on one partition holds only that partition; its commit never passes the held record', async () => {
    const topic = await harness.topicPair('inflight', 2);
    const groupId = uniqueName('group');
    for (const partition of [0, 1])
      await harness.raw.send({
        topic,
        messages: Array.from({ length: 10 }, (_, i) => ({ partition, value: JSON.stringify({ i }) })),
      });
    // Partition 0 is down from its fourth record on (offset 3), the rest of the topic is not.
    const sick = `${topic}-0-3`;
    let outage = true;
    let sickTries = 0;
    const inbox: InboxAcceptor = {
      maxPayloadBytes: harness.acceptor.maxPayloadBytes,
      acceptMany: (inputs) => {
        if (outage && inputs.some((input) => input.messageId === sick)) {
          sickTries += 1;
          return Promise.reject(new FerryError('FERRY_DATABASE_UNAVAILABLE', 'connection refused'));
        }
        return harness.acceptor.acceptMany(inputs);
      },
    };
    let consumer: KafkaInboxConsumer | null = null;
    try {
      consumer = attachKafkaConsumer(inbox, {
        connection: harness.connection,
        topic,
        groupId,
        consumer: 'inflight',
        ...fastGroup,
        maxWaitTimeMs: 200,
        maxBatchSize: 2,
        // kafkajs only: @platformatic/kafka refuses the option (it streams every partition).
        ...(kafkaClient() === 'kafkajs' ? { partitionsConsumedConcurrently: 2 } : {}),
        identity: topicPartitionOffsetIdentity,
        retryBackoff: { initialMs: 50, maxMs: 200 },
      });
      await consumer.ready();
      await waitFor(
        async () =>
          sickTries >= 3 && (await committedOffsets(harness.connection, groupId, topic)).get(1) === '10',
        () => `partition 1 not committed to its end beside the held partition 0 (${sickTries} tries)`,
      );
      // Partition 0: the chunk before the held record (offsets 0-1) at most; never past offset 2.
      const held = Number((await committedOffsets(harness.connection, groupId, topic)).get(0));
      expect(held).toBeLessThanOrEqual(2);
      expect((await harness.acceptor.rows('inflight')).map((row) => row.messageId)).not.toContain(sick);

      outage = false;
      await waitFor(
        () => harness.fullyCommitted(groupId, topic),
        () => 'group did not commit both partitions to their end after the outage',
      );
      const ids = (await harness.acceptor.rows('inflight')).map((row) => row.messageId);
      expect(new Set(ids).size).toBe(20);
      expect(ids).toHaveLength(20);
    } finally {
      await consumer?.close();
      await deleteGroups(harness.connection, [groupId]);
    }
  });
});
