/**
 * A record key or header name that is not valid UTF-8 is never decoded lossily (U+FFFD): keys `ff 61` and
 * `fe 61` would both read `\ufffda`, so an identity keyed on the record key would accept the
 * second record as a duplicate (lost) and a tenant function keyed on it would merge two tenants.
 * Such a record is dead-lettered `invalid_text` when an identity or tenant function would see its
 * key, and accepted as usual when none would (its key is not read). A header name that is not
 * UTF-8 is left out on both clients (kafkajs has decoded it with U+FFFD already).
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { Producer } from '@platformatic/kafka';
import { ConsumerHarness } from './consumerHarness';
import { brokers } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('keys ff 61 and fe 61 with an identity keyed on the record key are not merged into one id', async () => {
  const topic = await harness.topicPair('key-lossy-key');
  await harness.raw.send({
    topic,
    messages: [
      { key: Buffer.from([0xff, 0x61]), value: '{"n":1}' },
      { key: Buffer.from([0xfe, 0x61]), value: '{"n":2}' },
    ],
  });
  const { groupId, events } = await harness.start(topic, 'key-lossy-key', {
    identity: (record) => (record.key === null ? null : `key-${record.key}`),
  });

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('key-lossy-key');
  // Two distinct records: two distinct rows (or, if ferry refuses lossy keys, none accepted under U+FFFD).
  expect(rows.map((row) => row.messageId).filter((id) => id.includes('\ufffd'))).toEqual([]);
  expect(deadLettered(events)).toEqual(['invalid_text', 'invalid_text']);
});

test('keys ff 61 and fe 61 with a tenant function keyed on the record key are not one tenant', async () => {
  const topic = await harness.topicPair('key-lossy-tenant');
  await harness.raw.send({
    topic,
    messages: [
      { key: Buffer.from([0xff, 0x61]), value: '{"n":1}', headers: { [FERRY_HEADERS.messageId]: 'm1' } },
      { key: Buffer.from([0xfe, 0x61]), value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'm2' } },
    ],
  });
  const { groupId, events } = await harness.start(topic, 'key-lossy-tenant', {
    tenant: (record) => record.key,
  });

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('key-lossy-tenant');
  // Actual: both rows stored under tenant "\ufffda": two source tenants merged into one.
  expect(rows.filter((row) => (row.tenantId ?? '').includes('\ufffd')).map((row) => row.messageId)).toEqual(
    [],
  );
  expect(deadLettered(events)).toEqual(['invalid_text', 'invalid_text']);
});

test('a key that is not UTF-8 is not read when no function needs it: the record is accepted', async () => {
  const topic = await harness.topicPair('key-unread');
  await harness.raw.send({
    topic,
    messages: [
      { key: Buffer.from([0xff, 0x61]), value: '{"n":1}', headers: { [FERRY_HEADERS.messageId]: 'u1' } },
      { key: Buffer.from([0xfe, 0x61]), value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'u2' } },
    ],
  });
  const { groupId, events } = await harness.start(topic, 'key-unread', {
    identity: (record) => `key-${record.key}`,
  });

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('key-unread');
  expect(rows.map((row) => row.messageId).sort()).toEqual(['u1', 'u2']);
  expect(deadLettered(events)).toEqual([]);
});

test('header names that are not UTF-8 never reach the inbox, decoded lossily or otherwise', async () => {
  const topic = await harness.topicPair('key-header-names');
  // kafkajs's producer takes names as strings only; @platformatic/kafka's sends name bytes as given.
  const producer = new Producer({ clientId: 'ferry-test', bootstrapBrokers: brokers() });
  try {
    await producer.send({
      messages: [
        {
          topic,
          value: Buffer.from('{"n":1}'),
          headers: new Map<Buffer, Buffer>([
            [Buffer.from(FERRY_HEADERS.messageId), Buffer.from('names-1')],
            [Buffer.from([0xff, 0x61]), Buffer.from('one')],
            [Buffer.from([0xfe, 0x61]), Buffer.from('two')],
            [Buffer.from('plain'), Buffer.from('kept')],
          ]),
        },
      ],
    });
  } finally {
    await producer.close();
  }
  const { groupId } = await harness.start(topic, 'key-header-names');

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('key-header-names');
  expect(rows.map((row) => [row.messageId, row.headers])).toEqual([
    ['names-1', { [FERRY_HEADERS.messageId]: 'names-1', plain: 'kept' }],
  ]);
});

function deadLettered(events: readonly TransportConsumerEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'dead-lettered' ? [event.reason] : []));
}
