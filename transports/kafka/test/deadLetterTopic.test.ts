/**
 * The dead-letter topic of a consumer (real Kafka and PostgreSQL):
 * - one that is a consumed topic is refused at attach (FERRY_CONFIG_INVALID): every rejected
 *   record would be read back, rejected and produced again, for ever;
 * - a compacted one takes a rejected record that has no key (its copy is keyed
 *   `<topic>/<partition>/<offset>` of its source), so the record never stalls its partition;
 * - a missing one is named in a warning at start; the consumer starts (a broker may create the
 *   topic at the first dead letter) and dead-letters once it exists;
 * - a compacted one is named in a warning at start: there dead letters of one key replace each
 *   other, and a tombstone's copy (or one whose value was left out) deletes the key's earlier ones.
 */
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer, ensureTopics, type KafkaInboxConsumer } from '../src';
import { ConsumerHarness } from './consumerHarness';
import { captureLogger, endOffsets, fastGroup, readBack, uniqueName, waitFor } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a dead-letter topic equal to the consumed topic is refused, not looped through', async () => {
  const topic = await harness.topicPair('dlq-loop');
  let refused: unknown = null;
  try {
    await harness.start(topic, 'dlq-loop', { deadLetter: { topic } });
  } catch (error) {
    refused = error;
  }
  if (refused === null) {
    await harness.raw.send({ topic, messages: [{ key: 'gone', value: null }] });
    const size = async () => Number((await endOffsets(harness.connection, topic)).get(0) ?? '0');
    // Evidence of the loop: one record sent, the topic keeps growing (bounded wait, never a threshold).
    await waitFor(
      async () => (await size()) >= 20,
      () => 'the topic to grow to 20 records',
    ).catch(() => undefined);
    expect({ recordsInTopicAfterOneTombstone: await size() }).toEqual({ recordsInTopicAfterOneTombstone: 1 });
  }
  expect(refused).toBeInstanceOf(FerryConfigError);
  expect(refused).toMatchObject({ option: 'deadLetter.topic' });
});

test('a keyless record rejected into a compacted dead-letter topic does not stall its partition', async () => {
  const topic = uniqueName('dlq-compact');
  const deadLetter = `${topic}.dead`;
  harness.ownTopic(topic);
  harness.ownTopic(deadLetter);
  await ensureTopics(harness.connection, [
    { topic },
    { topic: deadLetter, configs: { 'cleanup.policy': 'compact' } },
  ]);
  await harness.raw.send({
    topic,
    messages: [
      { value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'bad' } },
      { value: '{"n":2}', headers: { [FERRY_HEADERS.messageId]: 'good' } },
    ],
  });
  const { events, groupId } = await harness.start(topic, 'dlq-compact', {
    deadLetter: { topic: deadLetter },
  });
  const failures = (list: TransportConsumerEvent[]) => list.filter((e) => e.type === 'acceptance-failed');
  const committed = () => harness.fullyCommitted(groupId, topic);
  await waitFor(
    async () => (await committed()) || failures(events).length >= 3,
    () => 'the partition committed to its end, or three failed attempts',
  );
  const firstError = failures(events)[0];
  expect({
    committed: await committed(),
    error: firstError && 'error' in firstError ? firstError.error : null,
  }).toEqual({ committed: true, error: null });
  const [dead] = await readBack(harness.connection, deadLetter, 1);
  expect([dead!.key, dead!.value]).toEqual([`${topic}/0/0`, 'not json']);
});

test('a missing dead-letter topic is named in a warning; the consumer starts and dead-letters once it exists', async () => {
  const topic = uniqueName('dlq-missing');
  const deadLetter = `${topic}.dlq`;
  harness.ownTopic(topic);
  harness.ownTopic(deadLetter);
  await ensureTopics(harness.connection, [{ topic }]);
  const log = captureLogger();
  let handle: KafkaInboxConsumer | null = null;
  try {
    handle = attachKafkaConsumer(harness.acceptor, {
      connection: harness.connection,
      topic,
      groupId: uniqueName('group'),
      consumer: 'dlq-missing',
      logger: log.logger,
      ...fastGroup,
      reconnectBackoff: { initialMs: 200, maxMs: 500 },
    });
    // A broker that creates topics on first use (Kafka's default) needs none: the start goes on.
    await handle.ready({ timeoutMs: 30_000 });
    expect(log.lines.map((line) => line.msg)).toContainEqual(
      expect.stringContaining(`${deadLetter} (the dead-letter topic of ${topic})`),
    );
    await ensureTopics(harness.connection, [{ topic: deadLetter }]);
    await harness.raw.send({
      topic,
      messages: [{ value: 'not json', headers: { [FERRY_HEADERS.messageId]: 'bad' } }],
    });
    const [dead] = await readBack(harness.connection, deadLetter, 1);
    expect(dead!.value).toBe('not json');
  } finally {
    await handle?.close();
  }
});

test('a compacted dead-letter topic is named in a warning at start', async () => {
  const topic = uniqueName('dlq-compacted');
  const deadLetter = `${topic}.dlq`;
  const plain = uniqueName('dlq-plain');
  harness.ownTopic(topic);
  harness.ownTopic(deadLetter);
  harness.ownTopic(plain);
  harness.ownTopic(`${plain}.dlq`);
  await ensureTopics(harness.connection, [
    { topic },
    { topic: plain },
    { topic: deadLetter, configs: { 'cleanup.policy': 'compact,delete' } },
    { topic: `${plain}.dlq` },
  ]);
  const log = captureLogger();
  let handle: KafkaInboxConsumer | null = null;
  try {
    handle = attachKafkaConsumer(harness.acceptor, {
      connection: harness.connection,
      topics: [topic, plain],
      groupId: uniqueName('group'),
      consumer: 'dlq-compacted',
      logger: log.logger,
      ...fastGroup,
    });
    await handle.ready({ timeoutMs: 30_000 });
    const warnings = log.lines.map((line) => line.msg).filter((msg) => msg.includes('compacted'));
    expect(warnings).toEqual([expect.stringContaining(`compacted (cleanup.policy compact): ${deadLetter};`)]);
    expect(warnings.join()).not.toContain(`${plain}.dlq`);
  } finally {
    await handle?.close();
  }
});
