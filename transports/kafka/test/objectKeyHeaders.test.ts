/**
 * Review finding (review8; failed first). A record's header named like an Object.prototype member (`__proto__`,
 * `constructor`, `toString`: names any producer may use, and emit() stores) is mangled where the
 * consumed headers are grouped by name:
 * - @platformatic/kafka (platformaticConsumer.ts toRecord, ~line 240) groups them into a `{}` by
 *   assignment: `headers['__proto__']` reads Object.prototype (not undefined), so the header
 *   becomes `headers.__proto__ = [Object.prototype, value]`, which only sets the object's
 *   prototype: the `__proto__` header never reaches the inbox (the gap review7 closed on the
 *   publishing side, left open on this consuming side).
 * - both clients (kafkajs's own decoder reads `obj[key]` the same way) turn `constructor` into
 *   `[Object, <value>]`; decodeHeaders takes the last value so the inbox is fine, but
 *   producibleHeaders (recordHeaders.ts:44) sends the function `Object` as a header value to the
 *   dead-letter topic: a record with such a header that must be dead-lettered cannot be.
 * Suggested fix: group with Object.hasOwn / a Map (or Object.create(null)) in toRecord, and have
 * headerValues/producibleHeaders keep only Buffer/string values (or rebuild kafkajs's grouping
 * with own-property checks).
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from './consumerHarness';
import { readBack, waitFor } from './support';

let harness: ConsumerHarness;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});

const ID = FERRY_HEADERS.messageId;

test('headers named __proto__, constructor and toString reach the inbox as sent', async () => {
  const topic = await harness.topicPair('r8-proto');
  const headers = JSON.parse(
    `{"${ID}": "one", "__proto__": "p", "constructor": "c", "toString": "t"}`,
  ) as Record<string, string>;
  await harness.raw.send({ topic, messages: [{ value: '{"n":1}', headers }] });
  const { groupId } = await harness.start(topic, 'r8-proto');
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit the record',
  );
  const [row] = await harness.acceptor.rows('r8-proto');
  expect(row?.messageId).toBe('one');
  expect(Object.entries(row?.headers ?? {}).sort()).toEqual(
    [
      [ID, 'one'],
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['toString', 't'],
    ].sort(),
  );
});

test('a record without identity carrying a constructor header is dead-lettered and its partition moves on', async () => {
  const topic = await harness.topicPair('r8-dead');
  await harness.raw.send({
    topic,
    messages: [
      { value: '{"n":1}', headers: { constructor: 'c', 'x-kept': 'yes' } },
      { value: '{"n":2}', headers: { [ID]: 'after' } },
    ],
  });
  const { groupId } = await harness.start(topic, 'r8-dead');
  await waitFor(
    () => harness.fullyCommitted(groupId, topic),
    () => 'group did not commit past the record to dead-letter',
  );
  expect((await harness.acceptor.rows('r8-dead')).map((row) => row.messageId)).toEqual(['after']);
  const [dead] = await readBack(harness.connection, `${topic}.dlq`, 1);
  expect(dead?.headers['x-kept']).toBe('yes');
  expect(dead?.headerValues['constructor']?.at(-1)).toBe('c');
});
