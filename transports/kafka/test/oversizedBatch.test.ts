/**
 * A chunk whose acceptance times out because of its size goes through in smaller pieces
 * (acceptHolding halves what it offers after a timeout) instead of being held for ever: before,
 * the same chunk was offered again after every backoff and timed out every time, stalling its
 * partition for good (failed first). platformatic/oversizedBatch.test.ts runs it on
 * @platformatic/kafka.
 *
 * The size is made to matter with a trigger that sleeps 100 ms per inserted receipt against a
 * 1,000 ms statement deadline: the 20 records together take 2 s, five at a time 0.5 s. On a
 * slower machine the pieces only get smaller (one receipt: 0.1 s).
 */
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer } from '../src';
import { committedOffsets, endOffsets, fastGroup, InboxTopic, outboxMessage, waitFor } from './support';
import { slowReceiptInserts } from '../../../test-support/slowReceipts';

const setup = new InboxTopic('oversized', 1);
const { connection, topic, groupId } = setup;

test('a chunk too big for the acceptance deadline is accepted in smaller pieces, each record once', async () => {
  await slowReceiptInserts(setup.database.db, 0.1);
  const events: TransportConsumerEvent[] = [];
  const inbox = new Inbox(setup.database.prisma, { statementTimeoutMs: 1_000 });
  const consumer = attachKafkaConsumer(inbox, {
    connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 20, maxMs: 40 },
    observer: (event) => events.push(event),
  });
  setup.attached = consumer;
  await consumer.ready();
  const records = Array.from({ length: 20 }, () => outboxMessage({ tenantId: 'tenant-a' }));
  const outcomes = await setup.publisher.publish(records, new AbortController().signal);
  expect(outcomes.every((o) => o.status === 'sent')).toBe(true);

  let last: string | undefined;
  await waitFor(
    async () =>
      (last = (await committedOffsets(connection, groupId, topic)).get(0)) ===
      (await endOffsets(connection, topic)).get(0),
    () =>
      `the partition was not committed to its end (offset ${String(last)}); events ${JSON.stringify(events.slice(0, 12))}`,
    30_000,
  );
  const rows = await setup.database.db.query<{ message_id: string }>(
    `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
  );
  expect(rows.map((row) => row.message_id)).toEqual(records.map((m) => m.id).sort());
  // The whole chunk did time out first (the partition was sought back and re-read): the
  // shorter chunks are what got it through. Nothing was dead-lettered for it. A timeout is
  // batch-wide: reported as the database not accepting (unavailable), as acceptHolding does.
  const held = events.filter((e) => e.type === 'acceptance-unavailable');
  expect(held[0]).toMatchObject({ count: 20, attempt: 1, error: expect.stringContaining('FERRY_TIMEOUT') });
  expect(events.filter((e) => e.type === 'acceptance-failed')).toEqual([]);
  expect(events.some((e) => e.type === 'acceptance-recovered')).toBe(true);
  expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
  await inbox.close();
}, 60_000);
