/**
 * Review finding (failed first), review 95. A dead-letter copy carries ferry's
 * `x-ferry-message-id` holding the identity the consumer used (core deadLetterIdentity), but not
 * the tenant it used: with `tenant: { fixed }` or a tenant function, a record without
 * `x-ferry-tenant-id` was copied without one, and one whose header named another tenant
 * (`tenant_mismatch`) was copied with that other tenant.
 * What the user sees: a ferry consumer draining the dead-letter topic (default `tenant: 'header'`)
 * stores the copies in the global scope, or in the scope of the tenant a producer forged.
 * What should happen: the copy carries the tenant ferry's tenant source gives the record (core
 * deadLetterTenant): the fixed tenant, or the tenant function's.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from './consumerHarness';
import { readBack, testConnection, uniqueName, waitFor } from './support';

const connection = testConnection();
let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

async function deadLetters(topic: string, groupId: string, count: number) {
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit past the invalid records',
  );
  const dead = await readBack(connection, `${topic}.dlq`, count);
  return dead
    .map((record) => [
      record.headers[FERRY_HEADERS.messageId],
      record.headers[FERRY_HEADERS.tenantId],
      record.headers[FERRY_HEADERS.rejectReason],
    ])
    .sort();
}

test('a dead-letter copy carries the fixed tenant, also in place of a tenant header naming another', async () => {
  const topic = await harness.topicPair('r95-fixed', 1);
  const groupId = uniqueName('group');
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'no-header' } },
      {
        value: '{"a":1}',
        headers: { [FERRY_HEADERS.messageId]: 'forged', [FERRY_HEADERS.tenantId]: 'globex' },
      },
      { value: '{"a":1}', headers: { [FERRY_HEADERS.messageId]: 'neighbour' } },
    ],
  });
  await harness.start(topic, 'r95-fixed', { groupId, tenant: { fixed: 'acme' } });
  expect(await deadLetters(topic, groupId, 2)).toEqual([
    ['forged', 'acme', 'tenant_mismatch'],
    ['no-header', 'acme', 'unparseable_body'],
  ]);
  expect((await harness.acceptor.rows('r95-fixed')).map((row) => row.messageId)).toEqual(['neighbour']);
});

test("a dead-letter copy carries the tenant function's tenant", async () => {
  const topic = await harness.topicPair('r95-fn', 1);
  const groupId = uniqueName('group');
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'fn-1' } },
      { value: JSON.stringify({ a: 'x'.repeat(70_000) }), headers: { [FERRY_HEADERS.messageId]: 'fn-2' } },
    ],
  });
  await harness.start(topic, 'r95-fn', { groupId, tenant: (record) => `t-${record.partition}` });
  expect(await deadLetters(topic, groupId, 2)).toEqual([
    ['fn-1', 't-0', 'unparseable_body'],
    ['fn-2', 't-0', 'payload_too_large'],
  ]);
});
