import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS, INBOX_TABLE, Inbox } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type AttachConsumerOptions, type SqsConnection } from '@ferry/sqs';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveNone,
  sendRaw,
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

  /** Attaches a consumer of `inbox` until `count` deliveries are settled (deleted), then closes it. */
  async function consumeUntilSettled(
    inbox: Inbox,
    options: Pick<AttachConsumerOptions, 'queueUrl' | 'consumer' | 'deadLetter'>,
    count: number,
  ): Promise<void> {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(inbox, {
      connection,
      waitTimeSeconds: 1,
      observer: (event) => events.push(event),
      ...options,
    });
    try {
      await consumer.ready();
      await waitFor(`${count} deliveries deleted`, () =>
        events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0) >= count ? true : undefined,
      );
    } finally {
      await consumer.close();
    }
  }

  it('stores each published event once in the inbox, duplicates deleted as duplicates', async () => {
    const inbox = new Inbox(database.prisma);
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('inbox') });
    const publisher = new SqsPublisher(connection);
    const messages = outboxMessages(20, queueUrl);
    expect((await publisher.publish(messages, neverAborted())).every((o) => o.status === 'sent')).toBe(true);
    await publisher.publish(messages.slice(0, 5), neverAborted());
    await consumeUntilSettled(inbox, { queueUrl, consumer: 'billing' }, 25);
    const rows = await database.db.query<{ message_id: string; tenant_id: string | null }>(
      `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE consumer = 'billing'`,
    );
    expect(rows.map((row) => row.message_id).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(rows.every((row) => row.tenant_id === 'tenant-a')).toBe(true);
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
  });

  it('leaves out a packed header whose name or value is not storable text (NUL, lone surrogate) and accepts its message and the neighbours', async () => {
    const inbox = new Inbox(database.prisma);
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('bad-headers') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('bad-headers-dead') });
    const packed: Array<[string, string]> = [
      ['good-1', '{"x-app":"kept"}'],
      ['packed-nul', '{"x-app":"kept","x-bin":"a\\u0000b"}'],
      ['packed-lone', '{"x-app":"kept","x-lone":"\\ud800"}'],
      ['packed-name', '{"x-app":"kept","x-\\u0000name":"value"}'],
      ['good-2', '{"x-app":"kept"}'],
    ];
    const run = uniqueName('h');
    for (const [name, headers] of packed) {
      await sendRaw(connection, queueUrl, '{"n":1}', {
        [FERRY_HEADERS.messageId]: `${run}-${name}`,
        [FERRY_HEADERS.tenantId]: 'tenant-a',
        'x-ferry-headers': headers,
        'x-plain': 'yes',
      });
    }
    await consumeUntilSettled(
      inbox,
      { queueUrl, consumer: 'bad-headers', deadLetter: { mode: 'queue', queueUrl: deadUrl } },
      packed.length,
    );
    const rows = await database.db.query<{ message_id: string; headers: unknown }>(
      `SELECT message_id, headers FROM ${INBOX_TABLE} WHERE consumer = 'bad-headers'`,
    );
    expect(new Map(rows.map((row) => [row.message_id, row.headers]))).toEqual(
      new Map(
        packed.map(([name]) => [
          `${run}-${name}`,
          {
            [FERRY_HEADERS.messageId]: `${run}-${name}`,
            [FERRY_HEADERS.tenantId]: 'tenant-a',
            'x-app': 'kept',
            'x-plain': 'yes',
          },
        ]),
      ),
    );
    expect(await receiveNone(connection, deadUrl)).toEqual([]);
  });
});
