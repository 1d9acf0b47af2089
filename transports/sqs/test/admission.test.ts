/**
 * The inbox's admission limit (maxPendingMessages) against the real inbox and ElasticMQ
 * (issue 12): a batch refused at the limit deletes its duplicate at once and holds only the new
 * messages, which are accepted exactly once when the backlog drains; nothing is dead-lettered.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveNone,
  uniqueName,
  waitFor,
} from './support/sqs';

describe('SQS consumer at the inbox admission limit', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  async function storedIds(): Promise<string[]> {
    const rows = await database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
    );
    return rows.map((row) => row.message_id);
  }

  it('deletes the duplicate of a refused batch at once and accepts the refused messages once the backlog drains', async () => {
    const inbox = new Inbox(database.prisma, { maxPendingMessages: 2 });
    await inbox.initialize();
    // The backlog comes through one queue, the mixed batch through another: a receive still in
    // flight when the first consumer closes cannot take the mixed batch.
    const { queueUrl: backlogUrl } = await queues.declare({ name: uniqueName('backlog') });
    const { queueUrl } = await queues.declare({ name: uniqueName('admission') });
    const publisher = new SqsPublisher(connection);
    const events: TransportConsumerEvent[] = [];
    const settled = () => events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);
    const attach = (url: string) =>
      attachSqsConsumer(inbox, {
        connection,
        queueUrl: url,
        consumer: 'billing',
        waitTimeSeconds: 1,
        retryBackoff: { initialMs: 50, maxMs: 100 },
        observer: (event) => events.push(event),
      });
    const backlog = outboxMessages(2, backlogUrl);
    const first = attach(backlogUrl);
    try {
      await first.ready();
      await publisher.publish(backlog, neverAborted());
      await waitFor('the backlog deleted (the limit reached)', () => (settled() >= 2 ? true : undefined));
    } finally {
      await first.close();
    }

    // Sent while no consumer runs, so that one receive takes the duplicate with the new ones.
    const fresh = outboxMessages(2, queueUrl);
    const duplicate = { ...backlog[0]!, destination: queueUrl };
    const outcomes = await publisher.publish([duplicate, ...fresh], neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
    const consumer = attach(queueUrl);
    try {
      await consumer.ready();
      await waitFor('the duplicate deleted while the new messages are refused', () =>
        settled() >= 3 && events.some((e) => e.type === 'acceptance-unavailable') ? true : undefined,
      );
      expect(await storedIds()).toEqual(backlog.map((m) => m.id).sort());

      // The backlog drains: the worker would finish these receipts.
      await database.db.query(
        `UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now() WHERE consumer = 'billing'`,
      );
      await waitFor('every message deleted', () => (settled() >= 5 ? true : undefined));
      expect(await storedIds()).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
    } finally {
      await consumer.close();
    }
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });
});
