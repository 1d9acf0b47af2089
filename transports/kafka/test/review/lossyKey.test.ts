/**
 * review3 probe (FAILS on main): a record key that is not valid UTF-8 reaches the `identity` and
 * `tenant` functions decoded with U+FFFD (src/wire.ts decodeRecord: `message.key.toString('utf8')`).
 * An extractor keyed on the record key (the natural choice for an outside producer's upserts)
 * then gives keys `ff 61` and `fe 61` the same id `\ufffda`, and the second record is lost as a
 * duplicate: exactly the loss the README rules out for message ids and tenants ("never accepted
 * under an id or tenant decoded with U+FFFD").
 * Expected: both records accepted under distinct ids, or the lossy ones dead-lettered `invalid_text`.
 * Actual: one row for two distinct records; the second is silently committed as a duplicate.
 * The same holds for a `tenant` function keyed on the record key: two tenants become one.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from '../consumerHarness';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('keys ff 61 and fe 61 with an identity keyed on the record key are not merged into one id', async () => {
  const topic = await harness.topicPair('review3-lossy-key');
  await harness.raw.send({
    topic,
    messages: [
      { key: Buffer.from([0xff, 0x61]), value: '{"n":1}' },
      { key: Buffer.from([0xfe, 0x61]), value: '{"n":2}' },
    ],
  });
  const { groupId } = await harness.start(topic, 'review3-lossy-key', {
    identity: (record) => (record.key === null ? null : `key-${record.key}`),
  });

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('review3-lossy-key');
  // Two distinct records: two distinct rows (or, if ferry refuses lossy keys, none accepted under U+FFFD).
  expect(rows.map((row) => row.messageId).filter((id) => id.includes('\ufffd'))).toEqual([]);
});

test('keys ff 61 and fe 61 with a tenant function keyed on the record key are not one tenant', async () => {
  const topic = await harness.topicPair('review3-lossy-tenant');
  await harness.raw.send({
    topic,
    messages: [
      { key: Buffer.from([0xff, 0x61]), value: '{"n":1}', headers: { [FERRY_HEADERS.messageId]: 'm1' } },
      { key: Buffer.from([0xfe, 0x61]), value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'm2' } },
    ],
  });
  const { groupId } = await harness.start(topic, 'review3-lossy-tenant', { tenant: (record) => record.key });

  await harness.waitFullyCommitted(groupId, topic);
  const rows = await harness.acceptor.rows('review3-lossy-tenant');
  // Actual: both rows stored under tenant "\ufffda": two source tenants merged into one.
  expect(rows.filter((row) => (row.tenantId ?? '').includes('\ufffd')).map((row) => row.messageId)).toEqual(
    [],
  );
});
