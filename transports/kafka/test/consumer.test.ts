import { FERRY_HEADERS, type OutboxMessage } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { Producer } from 'kafkajs';
import {
  KafkaPublisher,
  REJECT_REASONS,
  deleteTopics,
  ensureTopics,
  topicPartitionOffsetIdentity,
  type ConsumerOptions,
  type KafkaInboxConsumer,
} from '../src';
import { ConsumerHarness, eventSum as sum, type StartedConsumer } from './consumerHarness';
import {
  captureLogger,
  committedOffsets,
  outboxMessage,
  readBack,
  testConnection,
  uniqueName,
  waitFor,
  type PgTestAcceptor,
} from './support';

const connection = testConnection();
const never = new AbortController().signal;
let harness: ConsumerHarness;
let acceptor: PgTestAcceptor;
let publisher: KafkaPublisher;
let raw: Producer;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
  ({ acceptor, raw } = harness);
  publisher = new KafkaPublisher(connection);
  await publisher.connect();
});

afterEach(() => {
  acceptor.refuse = false;
  acceptor.afterCommit = null;
});

afterAll(async () => {
  await publisher.close();
  await harness.close();
});

const topicPair = (prefix: string, partitions: number) => harness.topicPair(prefix, partitions);

const start = (
  topic: string,
  groupId: string,
  consumer: string,
  extra: Partial<ConsumerOptions> = {},
): Promise<StartedConsumer> => harness.start(topic, consumer, { groupId, ...extra });

const fullyCommitted = (groupId: string, topic: string) => harness.fullyCommitted(groupId, topic);

async function publishAll(messages: readonly OutboxMessage[]): Promise<void> {
  const outcomes = await publisher.publish(messages, never);
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
}

function events(topic: string, count: number, keys = 10): OutboxMessage[] {
  return Array.from({ length: count }, (_, index) =>
    outboxMessage({ destination: topic, orderingKey: `k${index % keys}`, payload: { index } }),
  );
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
      () => sum(seen, 'accepted') >= 90,
      () => `accepted ${sum(seen, 'accepted')} of 90`,
    );
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit to the end offsets',
    );
    const rows = await acceptor.rows('dups');
    expect(rows.map((row) => row.messageId).sort()).toEqual(messages.map((message) => message.id).sort());
    // 60 new and 30 duplicates, each accepted and committed once.
    expect([sum(seen, 'received'), sum(seen, 'accepted'), sum(seen, 'settled')]).toEqual([90, 90, 90]);
    expect(seen.every((event) => event.transport === 'kafka' && event.source === topic)).toBe(true);
    const lags = seen.filter((event) => event.type === 'lag');
    expect(lags.length).toBeGreaterThan(0);
    // Once everything is committed, the newest lag of each partition is 0.
    const newest = new Map(lags.map((event) => [event.type === 'lag' && event.partition, event]));
    expect([...newest.values()].map((event) => event.type === 'lag' && event.lag)).toEqual(
      [...newest.keys()].map(() => 0),
    );
  });

  test('reports after each commit the lag that commit leaves: the records of the partition not yet settled', async () => {
    const topic = await topicPair('lag', 1);
    const groupId = uniqueName('group');
    await publishAll(events(topic, 20));
    const { events: seen } = await start(topic, groupId, 'lag', { maxBatchSize: 5 });

    await waitFor(
      () => sum(seen, 'settled') === 20 && seen.at(-1)?.type === 'lag',
      () => `settled ${sum(seen, 'settled')} of 20`,
    );
    let settled = 0;
    const expected: number[] = [];
    for (const event of seen) {
      if (event.type === 'settled') settled += event.count;
      if (event.type === 'lag') expected.push(20 - settled);
    }
    const lags = seen.flatMap((event) => (event.type === 'lag' ? [event.lag] : []));
    expect(lags.length).toBeGreaterThanOrEqual(4);
    expect(lags).toEqual(expected);
    expect(
      seen
        .filter((event) => event.type === 'lag')
        .every((event) => event.type === 'lag' && event.partition === 0),
    ).toBe(true);
  });

  test('is not changed by an observer that throws, rejects or never resolves', async () => {
    const topic = await topicPair('hostile-observer', 2);
    const groupId = uniqueName('group');
    const messages = events(topic, 12);
    await publishAll(messages);
    const seen: TransportConsumerEvent[] = [];
    let calls = 0;
    await start(topic, groupId, 'hostile-observer', {
      observer: (event) => {
        seen.push(event);
        calls += 1;
        if (calls % 3 === 0) throw new Error('observer threw');
        if (calls % 3 === 1) return Promise.reject(new Error('observer rejected'));
        return new Promise(() => undefined);
      },
    });

    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit to the end offsets',
    );
    const rows = await acceptor.rows('hostile-observer');
    expect(rows.map((row) => row.messageId).sort()).toEqual(messages.map((message) => message.id).sort());
    await waitFor(
      () => sum(seen, 'settled') === 12,
      () => `settled ${sum(seen, 'settled')} of 12`,
    );
    expect([sum(seen, 'received'), sum(seen, 'accepted')]).toEqual([12, 12]);
  });

  test('does not commit while the database is down, reports the outage (warn once), seeks back to the first unaccepted offset, and accepts everything once the database recovers', async () => {
    const topic = await topicPair('refused', 1);
    const groupId = uniqueName('group');
    const messages = events(topic, 20);
    await publishAll(messages);
    acceptor.refuse = true;
    const { logger, lines } = captureLogger();
    const { events: seen } = await start(topic, groupId, 'refused', {
      connection: testConnection({ logger }),
    });

    const failures = () => seen.filter((event) => event.type === 'acceptance-unavailable');
    await waitFor(
      () => failures().length >= 3,
      () => `${failures().length} acceptance failures`,
    );
    // Every attempt takes the whole partition again from offset 0: all 20 records.
    expect(failures().map((event) => event.type === 'acceptance-unavailable' && event.count)).toEqual(
      failures().map(() => 20),
    );
    expect(failures()[0]).toMatchObject({
      transport: 'kafka',
      source: topic,
      attempt: 1,
      error: expect.stringContaining('FERRY_DATABASE_UNAVAILABLE'),
    });
    expect(seen.filter((event) => event.type === 'acceptance-failed')).toEqual([]);
    expect((await committedOffsets(connection, groupId, topic)).get(0)).toBe('-1');
    expect(await acceptor.count('refused')).toBe(0);
    // The outage is logged at warn when it begins; each further retry only at debug.
    const paused = lines.filter((line) => line.msg.includes(`${topic}[0]`));
    expect(paused).toHaveLength(1);
    expect(paused[0]!.msg).toContain('acceptance unavailable');
    expect(paused[0]!.msg).toContain(
      'FERRY_DATABASE_UNAVAILABLE: test database refuses work <- connect ECONNREFUSED 127.0.0.1:1',
    );

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
          // Over the limit as the inbox measures it (its JSON.stringify), not only as a value.
          value: JSON.stringify({ big: 'x'.repeat(acceptor.maxPayloadBytes) }),
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

  test("takes a payload within the inbox's maxPayloadBytes whose value is written with escapes and whitespace (review 84)", async () => {
    const topic = await topicPair('escaped', 1);
    const groupId = uniqueName('group');
    const limit = acceptor.maxPayloadBytes;
    // Python's json.dumps (ensure_ascii): `é` is 2 bytes in the payload, 6 (`\u00e9`) in the value.
    const note = 'é'.repeat(Math.floor(limit / 4));
    const python = `{"note": "${'\\u00e9'.repeat(note.length)}"}`;
    // Pretty printed far beyond 6 × the limit: whitespace between tokens is not counted.
    const pretty = `{${' \n'.repeat(4 * limit)}"n": 1}`;
    expect(JSON.parse(python)).toEqual({ note });
    expect(Buffer.byteLength(JSON.stringify({ note }))).toBeLessThan(limit);
    expect(Buffer.byteLength(python)).toBeGreaterThan(limit);
    expect(Buffer.byteLength(pretty)).toBeGreaterThan(6 * limit);
    await raw.send({
      topic,
      messages: [
        { value: python, headers: { [FERRY_HEADERS.messageId]: 'python-1' } },
        { value: pretty, headers: { [FERRY_HEADERS.messageId]: 'pretty-1' } },
      ],
    });
    await start(topic, groupId, 'escaped');

    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit past the escaped records',
    );
    expect((await acceptor.rows('escaped')).map((row) => row.messageId)).toEqual(['python-1', 'pretty-1']);
  });

  test('does not commit past an invalid record until the dead-letter topic took it', async () => {
    const topic = await topicPair('dlq-down', 1);
    const groupId = uniqueName('group');
    const deadLetterTopic = uniqueName('dlq-later');
    harness.ownTopic(deadLetterTopic);
    // The consumer starts only once its dead-letter topic exists (ready() names a missing one):
    // the topic goes away after the start.
    await ensureTopics(connection, [{ topic: deadLetterTopic }]);
    const { events: seen } = await start(topic, groupId, 'dlq-down', {
      deadLetter: { topic: deadLetterTopic, sendRetries: 1 },
    });
    await deleteTopics(connection, [deadLetterTopic]);
    await raw.send({
      topic,
      messages: [{ value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'broken' } }],
    });

    const failures = () => seen.filter((event) => event.type === 'acceptance-failed');
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

  test("a dead-letter copy of a record without ferry's message-id header carries the identity the consumer used (review 84)", async () => {
    const topic = await topicPair('foreign-dead', 1);
    const groupId = uniqueName('group');
    await raw.send({
      topic,
      messages: [
        { value: 'not json' },
        { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'ferry-1' } },
      ],
    });
    await start(topic, groupId, 'foreign-dead', { identity: topicPartitionOffsetIdentity });

    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'group did not commit past the invalid records',
    );
    // topic-partition-offset names the source record; its copy in the dead-letter topic is at
    // another, so without the header a drain would take each copy as a record of its own.
    const dead = await readBack(connection, `${topic}.dlq`, 2);
    expect(dead.map((record) => record.headers[FERRY_HEADERS.messageId])).toEqual([
      `${topic}-0-0`,
      'ferry-1',
    ]);
  });

  test('close() during acceptance commits the chunk it finished: the next member of the group re-reads none of the accepted records', async () => {
    const topic = await topicPair('close-commit', 1);
    const groupId = uniqueName('group');
    const messages = events(topic, 200);
    await publishAll(messages);

    let closing: Promise<void> | null = null;
    let first: KafkaInboxConsumer | null = null;
    let acceptedAtClose = 0;
    acceptor.afterCommit = async () => {
      const accepted = await acceptor.count('close-commit');
      if (closing === null && first !== null && accepted >= 60) {
        acceptedAtClose = accepted;
        // close() while this chunk is accepted but its offset not yet committed.
        closing = first.close();
      }
    };
    const started = await start(topic, groupId, 'close-commit', { maxBatchSize: 20 });
    first = started.handle;
    await waitFor(
      () => closing !== null,
      () => 'close() was never called',
    );
    await closing;
    acceptor.afterCommit = null;

    expect(await acceptor.count('close-commit')).toBe(acceptedAtClose);
    expect((await committedOffsets(connection, groupId, topic)).get(0)).toBe(String(acceptedAtClose));

    const { events: seen } = await start(topic, groupId, 'close-commit', { maxBatchSize: 20 });
    await waitFor(
      () => fullyCommitted(groupId, topic),
      () => 'the next consumer did not commit to the end',
    );
    expect(await acceptor.count('close-commit')).toBe(200);
    // Accepted counts duplicates too: a re-read accepted record would make it larger.
    expect(sum(seen, 'accepted')).toBe(200 - acceptedAtClose);
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
    const assignedTo = (list: readonly TransportConsumerEvent[]) => {
      const joins = list.filter((event) => event.type === 'connected');
      const latest = joins[joins.length - 1];
      return latest?.type === 'connected' ? (latest.assignment?.[topic] ?? []).length : 0;
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
    // The rows are in the inbox before the member commits and reports them 'accepted'.
    await waitFor(
      () => sum(b.events, 'accepted') > bBefore,
      () => `b reported no acceptance after the rebalance (${sum(b.events, 'accepted')})`,
    );

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
