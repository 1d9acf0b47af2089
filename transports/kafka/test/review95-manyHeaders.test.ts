/**
 * Review 95: a record a hostile producer wrote with very many headers (distinct names, or one
 * name repeated) is decoded in time linear in its headers on both clients. kafkajs grouped them
 * by spreading the object built so far for every header (and concatenating a repeated name's
 * values), @platformatic/kafka's records were grouped by ferry copying a repeated name's values
 * for every value: quadratic, so one record of some 100 KB blocked the event loop for longer than
 * the session timeout at every fetch of it; the member was evicted, its commit refused, and the
 * partition re-read from the same offset for ever.
 */
import { FERRY_HEADERS } from '@ferry/core';
import { ConsumerHarness } from './consumerHarness';
import { waitFullyCommitted } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

/** Enough of each to block the event loop for longer than fastGroup's 6 s session, quadratically. */
const DISTINCT_NAMES = 10_000;
const REPEATS = 60_000;

test('a record with 10,000 distinct header names and one name 60,000 times neither stalls its partition nor blocks the consumer', async () => {
  const topic = await harness.topicPair('many-headers');
  const headers: Record<string, string | string[]> = {
    [FERRY_HEADERS.messageId]: 'many',
    repeated: Array.from({ length: REPEATS }, () => ''),
  };
  for (let i = 0; i < DISTINCT_NAMES; i += 1) headers[`h${i}`] = '';
  await harness.raw.send({ topic, messages: [{ value: '{"n":1}', headers }] });
  await harness.raw.send({
    topic,
    messages: [{ value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'after' } }],
  });

  const { groupId } = await harness.start(topic, 'many-headers');

  await waitFullyCommitted(harness.connection, groupId, topic, 60_000);
  const rows = await harness.acceptor.rows('many-headers');
  expect(rows.map((row) => row.messageId)).toEqual(['many', 'after']);
  expect(Object.keys(rows[0]!.headers ?? {})).toHaveLength(DISTINCT_NAMES + 2);
}, 120_000);
