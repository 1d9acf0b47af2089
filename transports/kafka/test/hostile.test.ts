/**
 * Records that ferry cannot turn into an inbox input, from producers ferry does not control, on
 * single-partition topics: each is dead-lettered (or skipped) with its reason and committed, and
 * the records behind it are accepted; none stalls its partition.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { REJECT_REASONS, VALUE_DROPPED_HEADER, ensureTopics } from '../src';
import { ConsumerHarness, eventSum } from './consumerHarness';
import { captureLogger, readBack, testConnection } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterEach(() => {
  harness.acceptor.failWhen = null;
});

afterAll(async () => {
  await harness.close();
});

const id = (value: string) => ({ [FERRY_HEADERS.messageId]: value });

describe('attachKafkaConsumer with hostile input', () => {
  test('dead-letters a tombstone with reason tombstone, with or without an identity, and accepts the records behind it', async () => {
    const topic = await harness.topicPair('tombstone');
    await harness.raw.send({
      topic,
      messages: [
        { key: 'gone', value: null },
        { key: 'gone-too', value: null, headers: id('t-2') },
        { value: '{"n":3}', headers: id('m-3') },
      ],
    });
    const { groupId } = await harness.start(topic, 'tombstone');

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('tombstone')).map((row) => row.messageId)).toEqual(['m-3']);
    const dead = await readBack(harness.connection, `${topic}.dlq`, 2);
    expect(
      dead.map((record) => [record.key, record.value, record.headers[FERRY_HEADERS.rejectReason]]),
    ).toEqual([
      ['gone', null, REJECT_REASONS.tombstone],
      ['gone-too', null, REJECT_REASONS.tombstone],
    ]);
  });

  test("with tombstones: 'skip' a tombstone is committed without a dead letter, counted settled but not accepted", async () => {
    const topic = await harness.topicPair('tombstone-skip');
    await harness.raw.send({
      topic,
      messages: [
        { key: 'gone', value: null },
        { value: '{"n":2}', headers: id('m-2') },
      ],
    });
    const { groupId, events } = await harness.start(topic, 'tombstone-skip', { tombstones: 'skip' });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('tombstone-skip')).map((row) => row.messageId)).toEqual(['m-2']);
    expect([eventSum(events, 'received'), eventSum(events, 'accepted'), eventSum(events, 'settled')]).toEqual(
      [2, 1, 2],
    );
    expect(events.filter((event) => event.type === 'dead-lettered')).toEqual([]);
  });

  test('dead-letters a value that is not valid UTF-8 instead of accepting it with replacement characters', async () => {
    const topic = await harness.topicPair('utf8');
    const broken = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    await harness.raw.send({
      topic,
      messages: [
        { value: broken, headers: id('bad-utf8') },
        { value: '{"name":"ok"}', headers: id('good') },
      ],
    });
    const { groupId } = await harness.start(topic, 'utf8');

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('utf8')).map((row) => row.messageId)).toEqual(['good']);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.unparseableBody);
    expect(dead!.headers['x-ferry-reject-detail']).toContain('UTF-8');
  });

  test('dead-letters a record whose identity extractor throws, instead of crashing the consumer on it', async () => {
    const topic = await harness.topicPair('identity-throws');
    await harness.raw.send({
      topic,
      messages: [
        { key: 'boom', value: '{"n":1}' },
        { key: 'fine', value: '{"n":2}' },
      ],
    });
    const { groupId } = await harness.start(topic, 'identity-throws', {
      identity: (record) => {
        if (record.key === 'boom') throw new Error('cannot read this key');
        return `id-${record.key}`;
      },
    });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('identity-throws')).map((row) => row.messageId)).toEqual(['id-fine']);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.missingIdentity);
    expect(dead!.headers['x-ferry-reject-detail']).toContain('cannot read this key');
  });

  test("does not pass an outside producer's x-ferry-transport-attempts or x-ferry-reject-reason to the inbox", async () => {
    const topic = await harness.topicPair('attempts');
    await harness.raw.send({
      topic,
      messages: [
        {
          value: '{"n":1}',
          headers: {
            ...id('forged'),
            [FERRY_HEADERS.transportAttempts]: '99',
            [FERRY_HEADERS.rejectReason]: 'inbox_invalid',
            'x-app': 'kept',
          },
        },
      ],
    });
    const { groupId } = await harness.start(topic, 'attempts');

    await harness.waitFullyCommitted(groupId, topic);
    const [row] = await harness.acceptor.rows('attempts');
    expect(row!.headers).toEqual({ [FERRY_HEADERS.messageId]: 'forged', 'x-app': 'kept' });
  });

  test('a header that is not storable text (NUL, invalid UTF-8, a NUL in its name) is left out; its record and neighbours are accepted, an identity with NUL is still dead-lettered', async () => {
    const topic = await harness.topicPair('bad-headers');
    const good = { 'x-app': 'kept', 'x-emoji': '🚀' };
    await harness.raw.send({
      topic,
      messages: [
        { value: '{"n":0}', headers: { ...id('m-0'), ...good } },
        { value: '{"n":1}', headers: { ...id('m-1'), ...good, 'x-bin': Buffer.from([0x01, 0x00, 0x02]) } },
        {
          value: '{"n":2}',
          headers: { ...id('m-2'), ...good, 'x-latin1': Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
        },
        { value: '{"n":3}', headers: { ...id('m-3'), ...good, 'x-\u0000name': 'value' } },
        { value: '{"n":4}', headers: { ...id('m-4\u0000'), ...good } },
        { value: '{"n":5}', headers: { ...id('m-5'), ...good } },
      ],
    });
    const { groupId } = await harness.start(topic, 'bad-headers', { maxBatchSize: 10 });

    await harness.waitFullyCommitted(groupId, topic);
    const rows = await harness.acceptor.rows('bad-headers');
    expect(rows.map((row) => [row.messageId, row.headers])).toEqual(
      ['m-0', 'm-1', 'm-2', 'm-3', 'm-5'].map((messageId) => [
        messageId,
        { [FERRY_HEADERS.messageId]: messageId, ...good },
      ]),
    );
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.inboxInvalid);
    expect(dead!.headers['x-ferry-reject-detail']).toContain('FERRY_VALIDATION_FAILED');
  });

  test('message ids whose bytes are not UTF-8 (ff 61, fe 61) are each dead-lettered as invalid_text naming the header, never deduplicated as one lossy id; the neighbour is accepted', async () => {
    const topic = await harness.topicPair('id-bytes');
    await harness.raw.send({
      topic,
      messages: [
        { key: 'ff', value: '{"n":1}', headers: { [FERRY_HEADERS.messageId]: Buffer.from([0xff, 0x61]) } },
        { key: 'fe', value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: Buffer.from([0xfe, 0x61]) } },
        { key: 'ok', value: '{"n":3}', headers: { [FERRY_HEADERS.messageId]: Buffer.from('ok-é') } },
      ],
    });
    const { groupId, events } = await harness.start(topic, 'id-bytes', { maxBatchSize: 10 });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('id-bytes')).map((row) => row.messageId)).toEqual(['ok-é']);
    const dead = await readBack(harness.connection, `${topic}.dlq`, 2);
    expect(
      dead.map((record) => [
        record.key,
        record.headers[FERRY_HEADERS.rejectReason],
        record.headers['x-ferry-reject-detail'],
      ]),
    ).toEqual([
      ['ff', REJECT_REASONS.invalidText, expect.stringContaining(FERRY_HEADERS.messageId)],
      ['fe', REJECT_REASONS.invalidText, expect.stringContaining(FERRY_HEADERS.messageId)],
    ]);
    expect(events.filter((event) => event.type === 'dead-lettered').map((event) => event.messageId)).toEqual([
      null,
      null,
    ]);
  });

  test('tenants whose bytes differ only where they are not UTF-8 are each dead-lettered as invalid_text, never put in one lossy tenant scope; the neighbour is accepted', async () => {
    const topic = await harness.topicPair('tenant-bytes');
    const tenant = (last: number) => Buffer.concat([Buffer.from('acme-'), Buffer.from([last])]);
    await harness.raw.send({
      topic,
      messages: [
        { value: '{"n":1}', headers: { ...id('t-ff'), [FERRY_HEADERS.tenantId]: tenant(0xff) } },
        { value: '{"n":2}', headers: { ...id('t-fe'), [FERRY_HEADERS.tenantId]: tenant(0xfe) } },
        { value: '{"n":3}', headers: { ...id('t-ok'), [FERRY_HEADERS.tenantId]: Buffer.from('acme-ü') } },
      ],
    });
    const { groupId } = await harness.start(topic, 'tenant-bytes', { maxBatchSize: 10 });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('tenant-bytes')).map((row) => [row.messageId, row.tenantId])).toEqual(
      [['t-ok', 'acme-ü']],
    );
    const dead = await readBack(harness.connection, `${topic}.dlq`, 2);
    expect(
      dead.map((record) => [
        record.headers[FERRY_HEADERS.messageId],
        record.headers[FERRY_HEADERS.rejectReason],
        record.headers['x-ferry-reject-detail'],
      ]),
    ).toEqual([
      ['t-ff', REJECT_REASONS.invalidText, expect.stringContaining(FERRY_HEADERS.tenantId)],
      ['t-fe', REJECT_REASONS.invalidText, expect.stringContaining(FERRY_HEADERS.tenantId)],
    ]);
  });

  test('a record PostgreSQL refuses (NUL in its JSON) is isolated and dead-lettered; its neighbours in the same chunk are accepted, nothing is retried, dead letters keep source order', async () => {
    const topic = await harness.topicPair('nul');
    await harness.raw.send({
      topic,
      messages: Array.from({ length: 10 }, (_, index) => ({
        value: index === 3 ? '{"text":"a\\u0000b"}' : index === 6 ? 'not json' : `{"n":${index}}`,
        headers: id(`m-${index}`),
      })),
    });
    const { logger, lines } = captureLogger();
    const { groupId, events } = await harness.start(topic, 'nul', {
      maxBatchSize: 10,
      connection: testConnection({ logger }),
    });

    await harness.waitFullyCommitted(groupId, topic);
    const accepted = (await harness.acceptor.rows('nul')).map((row) => row.messageId);
    expect(accepted).toEqual(['m-0', 'm-1', 'm-2', 'm-4', 'm-5', 'm-7', 'm-8', 'm-9']);
    const dead = await readBack(harness.connection, `${topic}.dlq`, 2);
    expect(
      dead.map((record) => [
        record.headers['x-ferry-source-offset'],
        record.headers[FERRY_HEADERS.rejectReason],
      ]),
    ).toEqual([
      ['3', REJECT_REASONS.inboxInvalid],
      ['6', REJECT_REASONS.unparseableBody],
    ]);
    expect(dead[0]!.headers['x-ferry-reject-detail']).toContain('FERRY_VALIDATION_FAILED');
    expect(events.filter((event) => event.type === 'acceptance-failed')).toEqual([]);
    expect(events.filter((event) => event.type === 'dead-lettered')).toEqual([
      {
        type: 'dead-lettered',
        transport: 'kafka',
        source: topic,
        reason: REJECT_REASONS.inboxInvalid,
        messageId: 'm-3',
      },
      {
        type: 'dead-lettered',
        transport: 'kafka',
        source: topic,
        reason: REJECT_REASONS.unparseableBody,
        messageId: 'm-6',
      },
    ]);
    const logged = lines.find((line) => line.msg.includes(`${topic}[0] offset 3 dead-lettered`));
    expect(logged?.msg).toMatch(/: inbox_invalid$/);
    // The detail is a field of the line, escaped, never its text (review 37).
    expect(logged?.detail).toContain('FERRY_VALIDATION_FAILED: PostgreSQL refused the data');
  });

  test('a record whose acceptance throws an unknown error alone is dead-lettered as acceptance_failed; the partition moves on', async () => {
    const topic = await harness.topicPair('unknown-error');
    harness.acceptor.failWhen = (input) => input.messageId === 'm-5';
    await harness.raw.send({
      topic,
      messages: Array.from({ length: 8 }, (_, index) => ({
        value: `{"n":${index}}`,
        headers: id(`m-${index}`),
      })),
    });
    const { groupId } = await harness.start(topic, 'unknown-error', { maxBatchSize: 4 });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('unknown-error')).map((row) => row.messageId)).toEqual([
      'm-0',
      'm-1',
      'm-2',
      'm-3',
      'm-4',
      'm-6',
      'm-7',
    ]);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.acceptanceFailed);
    expect(dead!.headers['x-ferry-reject-detail']).toContain('test acceptor cannot take m-5');
  });

  test('a record too large for its dead-letter topic is dead-lettered without its value, not retried forever', async () => {
    const topic = await harness.topicPair('dlq-small');
    const deadLetterTopic = `${topic}.small-dlq`;
    harness.ownTopic(deadLetterTopic);
    await ensureTopics(harness.connection, [
      { topic: deadLetterTopic, configs: { 'max.message.bytes': '2048' } },
    ]);
    await harness.raw.send({
      topic,
      messages: [
        { key: 'big', value: 'not json '.repeat(1_000), headers: id('big') },
        { key: 'small', value: 'not json either', headers: id('small') },
        { value: '{"n":3}', headers: id('fine') },
      ],
    });
    const { groupId } = await harness.start(topic, 'dlq-small', { deadLetter: { topic: deadLetterTopic } });

    await harness.waitFullyCommitted(groupId, topic);
    expect((await harness.acceptor.rows('dlq-small')).map((row) => row.messageId)).toEqual(['fine']);
    const dead = await readBack(harness.connection, deadLetterTopic, 2);
    expect(
      dead.map((record) => [
        record.key,
        record.value,
        record.headers[FERRY_HEADERS.rejectReason],
        record.headers[VALUE_DROPPED_HEADER],
      ]),
    ).toEqual([
      ['big', null, REJECT_REASONS.unparseableBody, expect.stringContaining('MESSAGE_TOO_LARGE')],
      ['small', 'not json either', REJECT_REASONS.unparseableBody, undefined],
    ]);
  });
});
