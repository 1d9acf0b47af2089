/**
 * Review finding (failed first), review 97. A tenant function that answers null (the global
 * scope) decided the record has no tenant, but its dead-letter copy kept the record's own
 * `x-ferry-tenant-id` (core deadLetterTenant answered "copy the header as it came").
 * What should happen: the copy carries the tenant the consumer decided: none.
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

test('the dead-letter copy of a record a tenant function put in the global scope carries no tenant header', async () => {
  const topic = await harness.topicPair('r97-global', 1);
  const groupId = uniqueName('group');
  const forged = { [FERRY_HEADERS.tenantId]: 'globex' };
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'g-1', ...forged } },
      {
        value: JSON.stringify({ a: 'x'.repeat(70_000) }),
        headers: { [FERRY_HEADERS.messageId]: 'g-2', ...forged },
      },
    ],
  });
  await harness.start(topic, 'r97-global', { groupId, tenant: () => null });
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit past the invalid records',
  );
  const dead = await readBack(connection, `${topic}.dlq`, 2);
  expect(
    dead
      .map((record) => [
        record.headers[FERRY_HEADERS.messageId],
        Object.hasOwn(record.headers, FERRY_HEADERS.tenantId),
        record.headers[FERRY_HEADERS.rejectReason],
      ])
      .sort(),
  ).toEqual([
    ['g-1', false, 'unparseable_body'],
    ['g-2', false, 'payload_too_large'],
  ]);
});
