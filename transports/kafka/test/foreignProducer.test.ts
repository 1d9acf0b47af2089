/**
 * Records written by the official Java client (kafka-clients), a producer ferry did not write,
 * with what it allows and kafkajs's producer does not: header values that are null, a header name
 * given twice, records in an aborted transaction. Each record is accepted, dead-lettered with its
 * reason or never seen (aborted), and the record behind it is accepted: none stalls its partition.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { REJECT_REASONS } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { produceToTopicsWithJava, type ForeignRecord } from './javaProducer';
import { readBack } from './support';

const ID = FERRY_HEADERS.messageId;
const TENANT = FERRY_HEADERS.tenantId;
const neighbour: ForeignRecord = { value: '{"n":"last"}', headers: [[ID, 'last']] };

/** Each case's records (the neighbour after them), on a topic of its own. */
const RECORDS: Readonly<Record<string, readonly ForeignRecord[]>> = {
  'null-header-dead': [
    {
      key: 'k',
      value: '{"n":1}',
      headers: [
        ['x-empty', null],
        ['x-kept', 'yes'],
      ],
    },
  ],
  'null-header': [
    {
      value: '{"n":1}',
      headers: [
        [ID, 'a'],
        [TENANT, null],
        ['x-empty', null],
      ],
    },
    {
      value: '{"n":2}',
      headers: [
        [ID, null],
        [TENANT, 'acme'],
      ],
    },
  ],
  twice: [
    {
      value: '{"n":1}',
      headers: [
        [ID, 'tenant-twice'],
        [TENANT, 'acme'],
        [TENANT, 'globex'],
      ],
    },
    {
      value: '{"n":2}',
      headers: [
        [ID, 'id-twice'],
        [ID, 'id-other'],
      ],
    },
    {
      value: '{"n":3}',
      headers: [
        [ID, 'alike'],
        [TENANT, 'acme'],
        [TENANT, 'acme'],
      ],
    },
  ],
  transactions: [
    { mode: 'commit', value: '{"n":1}', headers: [[ID, 'committed']] },
    { mode: 'abort', value: '{"n":2}', headers: [[ID, 'aborted']] },
    { mode: 'commit', value: '{"n":3}', headers: [[ID, 'committed-after']] },
  ],
};

let harness: ConsumerHarness;
const topics = new Map<string, string>();

// One run of the Java client (one JVM start) writes every case's topic.
beforeAll(async () => {
  harness = await ConsumerHarness.create();
  for (const prefix of Object.keys(RECORDS)) topics.set(prefix, await harness.topicPair(prefix));
  await produceToTopicsWithJava(
    [...topics].map(([prefix, topic]) => ({ topic, records: [...(RECORDS[prefix] ?? []), neighbour] })),
  );
});

afterAll(async () => {
  await harness.close();
});

/** Consumes the case's topic in a group of its own until it committed every record; the topic. */
async function consume(prefix: string): Promise<string> {
  const topic = topics.get(prefix);
  if (topic === undefined) throw new Error(`no records for ${prefix}`);
  const { groupId } = await harness.start(topic, prefix);
  await harness.waitFullyCommitted(groupId, topic);
  return topic;
}

describe('attachKafkaConsumer with records from the Java client', () => {
  test('a record with a null header value that must be dead-lettered reaches the dead-letter topic with its other headers, and its partition moves on', async () => {
    const topic = await consume('null-header-dead');

    expect((await harness.acceptor.rows('null-header-dead')).map((row) => row.messageId)).toEqual(['last']);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect([dead?.key, dead?.headers[FERRY_HEADERS.rejectReason], dead?.headers['x-kept']]).toEqual([
      'k',
      REJECT_REASONS.missingIdentity,
      'yes',
    ]);
  });

  test('a header whose value is null is absent: a null tenant header gives no tenant, a null message id header no identity', async () => {
    const topic = await consume('null-header');

    const rows = await harness.acceptor.rows('null-header');
    expect(rows.map((row) => [row.messageId, row.tenantId, row.headers])).toEqual([
      ['a', null, { [ID]: 'a' }],
      ['last', null, { [ID]: 'last' }],
    ]);
    const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
    expect(dead?.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.missingIdentity);
  });

  test('a ferry header given twice with different values is ambiguous and dead-lettered, never read as one of them; given twice alike it is accepted', async () => {
    const topic = await consume('twice');

    const rows = await harness.acceptor.rows('twice');
    expect(rows.map((row) => [row.messageId, row.tenantId])).toEqual([
      ['alike', 'acme'],
      ['last', null],
    ]);
    const dead = await readBack(harness.connection, `${topic}.dlq`, 2);
    expect(dead.map((record) => [record.value, record.headers[FERRY_HEADERS.rejectReason]])).toEqual([
      ['{"n":1}', REJECT_REASONS.ambiguousHeader],
      ['{"n":2}', REJECT_REASONS.ambiguousHeader],
    ]);
    // The copy keeps every value: one kept alone would read as unambiguous (replayed, it chose).
    expect([dead[0]?.headerValues[TENANT], dead[1]?.headerValues[ID]]).toEqual([
      ['acme', 'globex'],
      ['id-twice', 'id-other'],
    ]);
  });

  test('a record of an aborted transaction is never accepted; committed ones are', async () => {
    await consume('transactions');

    expect((await harness.acceptor.rows('transactions')).map((row) => row.messageId)).toEqual([
      'committed',
      'committed-after',
      'last',
    ]);
  });
});
