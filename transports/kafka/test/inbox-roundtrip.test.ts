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
