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

describe("SQS consumer feeding @ferry/core's Inbox", () => {
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

  it('stores each published event once in the inbox, duplicates deleted as duplicates', async () => {
    const inbox = new Inbox(database.prisma);
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('inbox') });
    const publisher = new SqsPublisher(connection);
    const messages = outboxMessages(20, queueUrl);
    expect((await publisher.publish(messages, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await publisher.publish(messages.slice(0, 5), neverAborted());
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(inbox, {
      connection,
      queueUrl,
      consumer: 'billing',
      waitTimeSeconds: 1,
      observer: (event) => events.push(event),
    });
    try {
      await consumer.ready();
      await waitFor('25 deliveries deleted', () =>
        events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0) >= 25 ? true : undefined,
      );
    } finally {
      await consumer.close();
    }
    const rows = await database.db.query<{ message_id: string; tenant_id: string | null }>(
      `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE consumer = 'billing'`,
    );
    expect(rows.map((row) => row.message_id).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(rows.every((row) => row.tenant_id === 'tenant-a')).toBe(true);
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });
});
