/**
 * The inbox's admission limit (maxPendingMessages) against the real inbox and Kafka (issue 12):
 * a chunk refused at the limit commits its duplicate (the records before the first refused one)
 * at once and seeks back to the refused records, which are accepted exactly once when the
 * backlog drains; nothing is dead-lettered. platformatic/admission.test.ts runs it on
 * @platformatic/kafka.
 */
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, deleteGroups, deleteTopics, ensureTopics } from '../src';
import {
  committedOffsets,
  endOffsets,
  fastGroup,
  InboxTopic,
  outboxMessage,
  uniqueName,
  waitFor,
} from './support';

const setup = new InboxTopic('admission', 1);
const { connection, topic, groupId } = setup;

async function storedIds(): Promise<string[]> {
  const rows = await setup.database.db.query<{ message_id: string }>(
    `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
  );
  return rows.map((row) => row.message_id);
}

async function committed(): Promise<string | undefined> {
  return (await committedOffsets(connection, groupId, topic)).get(0);
}

test('commits the duplicate ahead of refused records at once and accepts the refused ones once the backlog drains', async () => {
  const events: TransportConsumerEvent[] = [];
  const inbox = new Inbox(setup.database.prisma, { maxPendingMessages: 2 });
  const consumer = attachKafkaConsumer(inbox, {
    connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 100 },
    observer: (event) => events.push(event),
  });
  setup.attached = consumer;
  await consumer.ready();
  const backlog = [outboxMessage({ tenantId: 'tenant-a' }), outboxMessage({ tenantId: 'tenant-a' })];
  await setup.publisher.publish(backlog, new AbortController().signal);
  let last: string | undefined;
  await waitFor(
    async () => (last = await committed()) === '2',
    () => `the backlog was not committed (offset ${String(last)})`,
  );

  const fresh = [outboxMessage({ tenantId: 'tenant-a' }), outboxMessage({ tenantId: 'tenant-a' })];
  const outcomes = await setup.publisher.publish([backlog[0]!, ...fresh], new AbortController().signal);
  expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
  await waitFor(
    async () => (last = await committed()) === '3' && events.some((e) => e.type === 'acceptance-unavailable'),
    () =>
      `the duplicate (offset 2) was not committed while the new records are refused (offset ${String(last)})`,
  );
  expect(await storedIds()).toEqual(backlog.map((m) => m.id).sort());

  // The backlog drains: the worker would finish these receipts.
  await setup.database.db.query(
    `UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now() WHERE consumer = 'billing'`,
  );
  await waitFor(
    async () => (last = await committed()) === (await endOffsets(connection, topic)).get(0),
    () => `the partition was not committed to its end (offset ${String(last)})`,
  );
  expect(await storedIds()).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
  expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
  // Each of the five records is received once: the re-reads after a seek back are no new receipt.
  const received = events.reduce((total, e) => total + (e.type === 'received' ? e.count : 0), 0);
  expect(received).toBe(5);
});

test('a session that ends while a refused partition waits for its retry does not crash the process', async () => {
  // The backlog is the whole inbox's: what the case above left is finished first.
  await setup.database.db.query(`UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now()`);
  const crashTopic = uniqueName('admission-crash');
  const crashGroup = uniqueName('admission-crash-group');
  await ensureTopics(connection, [{ topic: crashTopic, partitions: 1 }, { topic: `${crashTopic}.dlq` }]);
  const events: TransportConsumerEvent[] = [];
  const inbox = new Inbox(setup.database.prisma, { maxPendingMessages: 1 });
  const retryMs = 1_500;
  const held = attachKafkaConsumer(inbox, {
    connection,
    topic: crashTopic,
    groupId: crashGroup,
    consumer: 'shipping',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: retryMs, maxMs: retryMs, jitter: 'none' },
    observer: (event) => events.push(event),
  });
  try {
    await held.ready();
    const signal = new AbortController().signal;
    await setup.publisher.publish([outboxMessage({ destination: crashTopic, tenantId: 'tenant-a' })], signal);
    await waitFor(
      () => events.some((e) => e.type === 'accepted'),
      () => 'the first record (the limit) was not accepted',
    );
    await setup.publisher.publish([outboxMessage({ destination: crashTopic, tenantId: 'tenant-a' })], signal);
    await waitFor(
      () => events.some((e) => e.type === 'acceptance-unavailable'),
      () => 'the second record was not refused at the limit',
    );
    // The session ends as kafkajs ends a crashed one before its restart delay: disconnected. The
    // partition's resume timer is still pending.
    const session = (held as unknown as { consumer: { disconnect(): Promise<void> } }).consumer;
    await session.disconnect();
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => void uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      await new Promise((resolve) => setTimeout(resolve, retryMs * 2));
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  } finally {
    await held.close();
    await deleteGroups(connection, [crashGroup]);
    await deleteTopics(connection, [crashTopic, `${crashTopic}.dlq`]);
  }
});
