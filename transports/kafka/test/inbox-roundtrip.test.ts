/**
 * The round trip against the real inbox of @ferry/core: outbox messages → Kafka (3 partitions)
 * → Inbox.acceptMany (ferry's receipts table, migrated by createTestDatabase), with duplicates
 * published on purpose.
 */
import { FERRY_HEADERS, INBOX_TABLE, Inbox, isFerryError } from '@ferry/core';
import { closedPort } from '../../../test-support/closedPort';
import { REJECT_REASONS, attachKafkaConsumer, deleteGroups, deleteTopics, ensureTopics } from '../src';
import {
  committedOffsets,
  endOffsets,
  fastGroup,
  InboxTopic,
  outboxMessage,
  readBack,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const setup = new InboxTopic('inbox-rt', 3);
const { connection, topic, groupId } = setup;

test('stores one inbox receipt per event although duplicates were published, and commits every partition to its end', async () => {
  const inbox = new Inbox(setup.database.prisma);
  const consumer = attachKafkaConsumer(inbox, {
    connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  setup.attached = consumer;
  await consumer.ready();
  const messages = Array.from({ length: 40 }, (_, index) =>
    outboxMessage({ tenantId: 'tenant-a', orderingKey: `k${index % 8}`, payload: { index } }),
  );
  const outcomes = [
    ...(await setup.publisher.publish(messages, new AbortController().signal)),
    ...(await setup.publisher.publish(messages.slice(0, 15), new AbortController().signal)),
  ];
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);

  await waitFor(
    async () => {
      const [committed, end] = await Promise.all([
        committedOffsets(connection, groupId, topic),
        endOffsets(connection, topic),
      ]);
      return [...end].every(([partition, high]) => committed.get(partition) === high);
    },
    () => 'the group did not commit to the end offsets',
  );
  const rows = await setup.database.db.query<{ message_id: string; n: number }>(
    `SELECT message_id, count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing' GROUP BY message_id`,
  );
  const stored = new Map(rows.map((row) => [row.message_id, row.n]));
  expect({
    missing: messages.map((message) => message.id).filter((id) => !stored.has(id)),
    extra: rows.filter((row) => row.n > 1 || !messages.some((message) => message.id === row.message_id)),
  }).toEqual({ missing: [], extra: [] });
});

test('with a fixed tenant the real inbox stores every record under it; a record claiming another tenant is dead-lettered, not stored', async () => {
  const fixedTopic = uniqueName('inbox-fixed');
  const fixedGroup = uniqueName('inbox-fixed-group');
  await ensureTopics(connection, [{ topic: fixedTopic }, { topic: `${fixedTopic}.dlq` }]);
  const raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await raw.connect();
  const fixed = attachKafkaConsumer(new Inbox(setup.database.prisma), {
    connection,
    topic: fixedTopic,
    groupId: fixedGroup,
    consumer: 'ledger',
    tenant: { fixed: 'tenant-a' },
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  try {
    await fixed.ready();
    const headers = (id: string, tenant?: string) => ({
      [FERRY_HEADERS.messageId]: id,
      ...(tenant === undefined ? {} : { [FERRY_HEADERS.tenantId]: tenant }),
    });
    await raw.send({
      topic: fixedTopic,
      messages: [
        { value: '{"n":1}', headers: headers('plain') },
        { value: '{"n":2}', headers: headers('forged', 'tenant-b') },
        { value: '{"n":3}', headers: headers('agreeing', 'tenant-a') },
      ],
    });
    await waitFor(
      async () => (await committedOffsets(connection, fixedGroup, fixedTopic)).get(0) === '3',
      () => 'the fixed-tenant group did not commit its 3 records',
    );
    const rows = await setup.database.db.query<{ message_id: string; tenant_id: string | null }>(
      `SELECT message_id, tenant_id FROM ${INBOX_TABLE} WHERE consumer = 'ledger' ORDER BY message_id`,
    );
    expect(rows).toEqual([
      { message_id: 'agreeing', tenant_id: 'tenant-a' },
      { message_id: 'plain', tenant_id: 'tenant-a' },
    ]);
    const [dead] = await readBack(connection, `${fixedTopic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.tenantMismatch);
  } finally {
    await fixed.close();
    await raw.disconnect();
    await deleteGroups(connection, [fixedGroup]);
    await deleteTopics(connection, [fixedTopic, `${fixedTopic}.dlq`]);
  }
});

test('a record whose JSON holds \\u0000 is dead-lettered by reason and the records before and after it in its chunk are stored', async () => {
  const nulTopic = uniqueName('inbox-nul');
  const nulGroup = uniqueName('inbox-nul-group');
  await ensureTopics(connection, [{ topic: nulTopic }, { topic: `${nulTopic}.dlq` }]);
  const raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await raw.connect();
  const nul = attachKafkaConsumer(new Inbox(setup.database.prisma), {
    connection,
    topic: nulTopic,
    groupId: nulGroup,
    consumer: 'audit',
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  try {
    await nul.ready();
    await raw.send({
      topic: nulTopic,
      messages: Array.from({ length: 6 }, (_, index) => ({
        value: index === 2 ? '{"note":"a\\u0000b"}' : `{"n":${index}}`,
        headers: { [FERRY_HEADERS.messageId]: `m-${index}`, [FERRY_HEADERS.tenantId]: 'tenant-a' },
      })),
    });
    await waitFor(
      async () => (await committedOffsets(connection, nulGroup, nulTopic)).get(0) === '6',
      () => 'the group did not commit past the NUL record',
    );
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'audit' ORDER BY message_id`,
    );
    expect(rows.map((row) => row.message_id)).toEqual(['m-0', 'm-1', 'm-3', 'm-4', 'm-5']);
    const [dead] = await readBack(connection, `${nulTopic}.dlq`, 1);
    expect([dead!.headers['x-ferry-source-offset'], dead!.headers[FERRY_HEADERS.rejectReason]]).toEqual([
      '2',
      REJECT_REASONS.invalidText,
    ]);
  } finally {
    await nul.close();
    await raw.disconnect();
    await deleteGroups(connection, [nulGroup]);
    await deleteTopics(connection, [nulTopic, `${nulTopic}.dlq`]);
  }
});

/**
 * Defect (failed first): large doubles as Python (`1e+20`) and Java (`1.5E17`) write them are
 * floats, read as the nearest double; their value is an integer from 2^53 to 1e21, which the
 * inbox refused after the body was parsed (inbox_invalid) and the worker refused again when jsonb
 * wrote them back as digits. The same value written as digits is still dead-lettered.
 */
test('records with floats from 2^53 to 1e21 are accepted and the handler gets exactly those doubles; digits beyond 2^53-1 are dead-lettered', async () => {
  const floatTopic = uniqueName('inbox-floats');
  const floatGroup = uniqueName('inbox-floats-group');
  await ensureTopics(connection, [{ topic: floatTopic }, { topic: `${floatTopic}.dlq` }]);
  const raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await raw.connect();
  const seen: unknown[] = [];
  const inbox = new Inbox(setup.database.prisma, {
    handlers: {
      floats: async (payload: unknown) => {
        seen.push(payload);
      },
    },
  });
  const floats = attachKafkaConsumer(inbox, {
    connection,
    topic: floatTopic,
    groupId: floatGroup,
    consumer: 'floats',
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  try {
    await floats.ready();
    const bodies = [
      '{"amount":1.5e17,"n":1e20,"neg":-2.5e18}',
      '{"amount":150000000000000000}',
      '{"list":[1.5E17,-9.2E+18],"f":150000000000000000.0}',
      // Jackson's BigDecimal 1234567890123456780, and a float in an array: neither prints back as itself.
      '{"orderId":1.23456789012345678E+18}',
      '{"ids":[1,-9007199254740993.0]}',
    ];
    await raw.send({
      topic: floatTopic,
      messages: bodies.map((value, index) => ({
        value,
        headers: { [FERRY_HEADERS.messageId]: `f-${index}`, [FERRY_HEADERS.tenantId]: 'tenant-a' },
      })),
    });
    await waitFor(
      async () => (await committedOffsets(connection, floatGroup, floatTopic)).get(0) === '5',
      () => 'the group did not commit its 5 records',
    );
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'floats' ORDER BY message_id`,
    );
    const dead = await readBack(connection, `${floatTopic}.dlq`, 3);
    expect({
      stored: rows.map((row) => row.message_id),
      dead: dead
        .map((record) => [
          record.headers[FERRY_HEADERS.messageId],
          record.headers[FERRY_HEADERS.rejectReason],
        ])
        .sort(),
    }).toEqual({
      stored: ['f-0', 'f-2'],
      dead: [
        ['f-1', REJECT_REASONS.unparseableBody],
        ['f-3', REJECT_REASONS.unparseableBody],
        ['f-4', REJECT_REASONS.unparseableBody],
      ],
    });
    expect(await inbox.runOnce()).toMatchObject({ claimed: 2, completed: 2, dead: 0 });
    expect(seen).toEqual(
      expect.arrayContaining([
        { amount: 1.5e17, n: 1e20, neg: -2.5e18 },
        { list: [1.5e17, -9.2e18], f: 1.5e17 },
      ]),
    );
    expect(seen).toHaveLength(2);
  } finally {
    await floats.close();
    await inbox.close();
    await raw.disconnect();
    await deleteGroups(connection, [floatGroup]);
    await deleteTopics(connection, [floatTopic, `${floatTopic}.dlq`]);
  }
});

test('attaching for a consumer the inbox has no handler for fails with FERRY_HANDLER_MISSING before connecting', async () => {
  const inbox = new Inbox(setup.database.prisma, { handlers: { orders: async () => undefined } });
  // No broker answers on these brokers: the check has to come first.
  const unreachable = testConnection({
    brokers: [`127.0.0.1:${await closedPort()}`],
    connectionTimeoutMs: 200,
  });
  expect(() =>
    attachKafkaConsumer(inbox, {
      connection: unreachable,
      topic,
      groupId: uniqueName('inbox-missing-group'),
      consumer: 'orderz',
    }),
  ).toThrow(expect.objectContaining({ code: 'FERRY_HANDLER_MISSING' }));
});

test('ready() resolves once joined, and rejects with FERRY_CLOSED after close()', async () => {
  const readyGroup = uniqueName('inbox-ready-group');
  const member = attachKafkaConsumer(new Inbox(setup.database.prisma), {
    connection,
    topic,
    groupId: readyGroup,
    consumer: 'billing',
    ...fastGroup,
  });
  try {
    await expect(member.ready({ timeoutMs: 60_000 })).resolves.toBeUndefined();
  } finally {
    await member.close();
    await deleteGroups(connection, [readyGroup]);
  }
  expect(isFerryError(await member.ready().catch((caught: unknown) => caught), 'FERRY_CLOSED')).toBe(true);
});
