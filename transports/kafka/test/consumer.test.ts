import { FERRY_HEADERS, type OutboxMessage } from '@ferry/core';
import type { Producer } from 'kafkajs';
import {
  KafkaPublisher,
  REJECT_REASONS,
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  topicPartitionOffsetIdentity,
  type ConsumerOptions,
  type KafkaConsumerEvent,
  type KafkaInboxConsumer,
} from '../src';
import {
  PgTestAcceptor,
  committedOffsets,
  endOffsets,
  fastGroup,
  outboxMessage,
  readBack,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const connection = testConnection();
const never = new AbortController().signal;
const topics: string[] = [];
const groups: string[] = [];
const running: KafkaInboxConsumer[] = [];
let acceptor: PgTestAcceptor;
let publisher: KafkaPublisher;
let raw: Producer;

beforeAll(async () => {
  acceptor = await PgTestAcceptor.create();
  publisher = new KafkaPublisher(connection);
  raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await Promise.all([publisher.connect(), raw.connect()]);
});

afterEach(() => {
  acceptor.refuse = false;
  acceptor.afterCommit = null;
});

afterAll(async () => {
  await Promise.all(running.map((consumer) => consumer.close()));
  await Promise.all([publisher.close(), raw.disconnect()]);
  await deleteGroups(connection, groups);
  await deleteTopics(connection, topics);
  await acceptor.drop();
});

/** A source topic and its dead-letter topic. */
async function topicPair(prefix: string, partitions: number): Promise<string> {
  const name = uniqueName(prefix);
  topics.push(name, `${name}.dlq`);
  await ensureTopics(connection, [{ topic: name, partitions }, { topic: `${name}.dlq` }]);
  return name;
}

interface Started {
  readonly handle: KafkaInboxConsumer;
  readonly events: KafkaConsumerEvent[];
}

async function start(
  topic: string,
  groupId: string,
  consumer: string,
  extra: Partial<ConsumerOptions> = {},
): Promise<Started> {
  const events: KafkaConsumerEvent[] = [];
  if (!groups.includes(groupId)) groups.push(groupId);
  const handle = await attachKafkaConsumer(acceptor, {
    connection,
    topic,
    groupId,
    consumer,
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 200 },
    onEvent: (event) => events.push(event),
    ...extra,
  });
  running.push(handle);
  await handle.ready();
  return { handle, events };
}

async function publishAll(messages: readonly OutboxMessage[]): Promise<void> {
  const outcomes = await publisher.publish(messages, never);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
}

function events(topic: string, count: number, keys = 10): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: `k${index % keys}`, payload: { index } }),
  );
}

/** True once the group committed every partition of `topic` up to its end offset. */
async function fullyCommitted(groupId: string, topic: string): Promise<boolean> {
  const [committed, end] = await Promise.all([
    committedOffsets(connection, groupId, topic),
    endOffsets(connection, topic),
  ]);
  return [...end].every(([partition, high]) => committed.get(partition) === high);
}

function sum(list: readonly KafkaConsumerEvent[], field: 'accepted' | 'duplicates' | 'deadLettered'): number {
  return list.reduce((total, event) => total + (event.kind === 'accepted' ? event[field] : 0), 0);
}

describe('attachKafkaConsumer: Kafka into a PostgreSQL inbox', () => {
  test('accepts each event once though the topic carries duplicates, and commits every partition to its end', async () => {
    const topic = await topicPair('dups', 3);
    const groupId = uniqueName('group');
    const messages = events(topic, 60);
    await publishAll(messages);
    await publishAll(messages.slice(0, 30));
    const { events: seen } = await start(topic, groupId, 'dups');

    await waitFor(
      () => sum(seen, 'accepted') + sum(seen, 'duplicates') >= 90,
      () => `offered ${sum(seen, 'accepted') + sum(seen, 'duplicates')} of 90`,
    );
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit to the end offsets',
    );
    const rows = await acceptor.rows('dups');
    expect(rows.map((row) => row.messageId).sort()).toEqual(messages.map((message) => message.id).sort());
    expect(sum(seen, 'accepted')).toBe(60);
    expect(sum(seen, 'duplicates')).toBe(30);
  });

  test('does not commit while acceptance fails, seeks back to the first unaccepted offset, and accepts everything once the database recovers', async () => {
    const topic = await topicPair('refused', 1);
    const groupId = uniqueName('group');
    const messages = events(topic, 20);
    await publishAll(messages);
    acceptor.refuse = true;
    const { events: seen } = await start(topic, groupId, 'refused');

    const failures = () => seen.filter((event) => event.kind === 'acceptance_failed');
    await waitFor(
      () => failures().length >= 3,
      () => `${failures().length} acceptance failures`,
    );
    expect(failures().map((event) => event.kind === 'acceptance_failed' && event.offset)).toEqual(
      failures().map(() => '0'),
    );
    expect((await committedOffsets(connection, groupId, topic)).get(0)).toBe('-1');
    expect(await acceptor.count('refused')).toBe(0);

    acceptor.refuse = false;
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit to the end after recovery',
    );
    expect(await acceptor.count('refused')).toBe(20);
  });

  test('dead-letters records that are invalid before acceptance with the reason in a header, then commits past them', async () => {
    const topic = await topicPair('invalid', 1);
    const groupId = uniqueName('group');
    const valid = outboxMessage({ destination: topic, payload: { ok: true } });
    await publishAll([valid]);
    await raw.send({
      topic,
      messages: [
        { value: JSON.stringify({ anonymous: true }) },
        { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'bad-json' } },
        { value: '[1,2]', headers: { [FERRY_HEADERS.messageId]: 'an-array' } },
        {
          value: 'x'.repeat(acceptor.maxPayloadBytes + 1),
          headers: { [FERRY_HEADERS.messageId]: 'too-big' },
        },
      ],
    });
    const last = outboxMessage({ destination: topic, payload: { ok: 'last' } });
    await publishAll([last]);
    await start(topic, groupId, 'invalid');

    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit past the invalid records',
    );
    expect((await acceptor.rows('invalid')).map((row) => row.messageId)).toEqual([valid.id, last.id]);
    const dead = await readBack(connection, `${topic}.dlq`, 4);
    expect(
      dead.map((record) => [
        record.headers[FERRY_HEADERS.rejectReason],
        record.headers['x-ferry-source-offset'],
      ]),
    ).toEqual([
      [REJECT_REASONS.missingIdentity, '1'],
      [REJECT_REASONS.unparseableBody, '2'],
      [REJECT_REASONS.unparseableBody, '3'],
      [REJECT_REASONS.payloadTooLarge, '4'],
    ]);
    expect(dead[1]!.value).toBe('not json');
  });

  test('does not commit past an invalid record until the dead-letter topic took it', async () => {
    const topic = await topicPair('dlq-down', 1);
    const groupId = uniqueName('group');
    const deadLetterTopic = uniqueName('dlq-later');
    topics.push(deadLetterTopic);
    await raw.send({
      topic,
      messages: [{ value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'broken' } }],
    });
    const { events: seen } = await start(topic, groupId, 'dlq-down', {
      deadLetterTopic,
      deadLetterRetries: 1,
    });

    const failures = () => seen.filter((event) => event.kind === 'acceptance_failed');
    await waitFor(
      () => failures().length >= 2,
      () => `${failures().length} failed dead-letter attempts`,
    );
    expect((await committedOffsets(connection, groupId, topic)).get(0)).toBe('-1');

    await ensureTopics(connection, [{ topic: deadLetterTopic }]);
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit after the dead-letter topic appeared',
    );
    const [dead] = await readBack(connection, deadLetterTopic, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.unparseableBody);
  });

  test("uses the configured identity extractor for records without ferry's message-id header", async () => {
    const topic = await topicPair('foreign', 1);
    const groupId = uniqueName('group');
    await raw.send({ topic, messages: [{ value: '{"a":1}' }, { value: '{"a":2}' }] });
    await start(topic, groupId, 'foreign', { identity: topicPartitionOffsetIdentity });

    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit the foreign records',
    );
    expect((await acceptor.rows('foreign')).map((row) => row.messageId)).toEqual([
      `${topic}-0-0`,
      `${topic}-0-1`,
    ]);
  });

  test('a consumer killed mid-batch loses nothing: its uncommitted chunk is re-read by the restarted consumer and absorbed as duplicates', async () => {
    const topic = await topicPair('crash', 1);
    const groupId = uniqueName('group');
    const messages = events(topic, 200);
    await publishAll(messages);

    let crashing: Promise<void> | null = null;
    let first: KafkaInboxConsumer | null = null;
    let acceptedBeforeCrash = 0;
    acceptor.afterCommit = async () => {
      const accepted = await acceptor.count('crash');
      if (crashing === null && first !== null && accepted >= 60) {
        acceptedBeforeCrash = accepted;
        // Stops the consumer while this chunk is accepted but not yet committed.
        crashing = first.close();
      }
    };
    const started = await start(topic, groupId, 'crash', { maxAcceptBatch: 20 });
    first = started.handle;
    await waitFor(
      () => crashing !== null,
      () => 'the consumer was never killed',
    );
    await crashing;
    acceptor.afterCommit = null;

    const committedAtCrash = Number((await committedOffsets(connection, groupId, topic)).get(0));
    expect(committedAtCrash).toBeLessThan(acceptedBeforeCrash);

    const { events: seen } = await start(topic, groupId, 'crash', { maxAcceptBatch: 20 });
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'the restarted consumer did not commit to the end',
    );
    expect(await acceptor.count('crash')).toBe(200);
    expect(sum(seen, 'duplicates')).toBe(acceptedBeforeCrash - committedAtCrash);
    expect(sum(seen, 'accepted')).toBe(200 - acceptedBeforeCrash);
  });

  test('two consumers in one group share the partitions; joins and leaves lose nothing', async () => {
    const topic = await topicPair('rebalance', 3);
    const groupId = uniqueName('group');
    const all: OutboxMessage[] = [];
    const publishRound = async () => {
      const round = events(topic, 60, 12);
      all.push(...round);
      await publishAll(round);
      await waitFor(
        async () => (await acceptor.count('rebalance')) >= all.length,
        () => `accepted fewer than ${all.length}`,
      );
    };
    const a = await start(topic, groupId, 'rebalance');
    await publishRound();

    const b = await start(topic, groupId, 'rebalance');
    const assignedTo = (list: readonly KafkaConsumerEvent[]) => {
      const joins = list.filter((event) => event.kind === 'joined');
      const latest = joins[joins.length - 1];
      return latest?.kind === 'joined' ? (latest.assignment[topic] ?? []).length : 0;
    };
    await waitFor(
      () =>
        assignedTo(a.events) + assignedTo(b.events) === 3 &&
        assignedTo(a.events) > 0 &&
        assignedTo(b.events) > 0,
      () => `assignments a=${assignedTo(a.events)} b=${assignedTo(b.events)}`,
    );
    const bBefore = sum(b.events, 'accepted');
    await publishRound();
    expect(sum(b.events, 'accepted')).toBeGreaterThan(bBefore);

    await a.handle.close();
    await waitFor(
      () => assignedTo(b.events) === 3,
      () => `b holds ${assignedTo(b.events)} partitions after a left`,
    );
    await publishRound();
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit to the end',
    );
    const ids = (await acceptor.rows('rebalance')).map((row) => row.messageId);
    expect(ids.sort()).toEqual(all.map((message) => message.id).sort());
  });

  test('close() is safe to call twice', async () => {
    const topic = await topicPair('close', 1);
    const { handle } = await start(topic, uniqueName('group'), 'close');
    await Promise.all([handle.close(), handle.close()]);
    await handle.close();
  });
});
