/**
 * What ready() says when a consumer cannot start (real Kafka):
 * - a refusal only an operator can fix (here INVALID_SESSION_TIMEOUT: a sessionTimeoutMs below
 *   the broker's group.min.session.timeout.ms) rejects it at once with FERRY_PERMANENT_FAILURE,
 *   not retriable, naming the option, as RabbitMQ's ready() does for an access refusal;
 * - a consumed topic that does not exist is named in its error (with `topics: [...]` the user
 *   learns which one), and the consumer starts once the topic exists.
 */
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
} from '../src';
import { ConsumerHarness } from './consumerHarness';
import { fastGroup, uniqueName } from './support';

let harness: ConsumerHarness;

beforeAll(async () => {
  harness = await ConsumerHarness.create();
});

afterAll(async () => {
  await harness.close();
});

test('a session timeout the broker refuses fails ready() at once, naming the option', async () => {
  const topic = await harness.topicPair('ready-session');
  let refused: unknown = null;
  let handle: KafkaInboxConsumer | null = null;
  try {
    handle = attachKafkaConsumer(harness.acceptor, {
      connection: harness.connection,
      topic,
      groupId: uniqueName('group'),
      consumer: 'ready-session',
      sessionTimeoutMs: 3_000,
      heartbeatIntervalMs: 300,
    });
    await handle.ready({ timeoutMs: 15_000 });
  } catch (error) {
    refused = error;
  } finally {
    await handle?.close();
  }
  expect({
    code: (refused as { code?: string } | null)?.code,
    message: String(refused),
    retriable: (refused as { retriable?: boolean } | null)?.retriable,
  }).toEqual({
    code: 'FERRY_PERMANENT_FAILURE',
    message: expect.stringContaining('sessionTimeoutMs'),
    retriable: false,
  });
});

test('ready() against a topic that does not exist names the topic, and the consumer takes it once created', async () => {
  const present = await harness.topicPair('ready-present');
  const topic = uniqueName('ready-missing');
  const groupId = uniqueName('group');
  const { connection } = harness;
  let handle: KafkaInboxConsumer | null = null;
  let refused: unknown = null;
  try {
    handle = attachKafkaConsumer(harness.acceptor, {
      connection,
      topics: [present, topic],
      groupId,
      consumer: 'ready-missing',
      ...fastGroup,
      reconnectBackoff: { initialMs: 200, maxMs: 500 },
    });
    await handle.ready({ timeoutMs: 3_000 }).catch((error: unknown) => (refused = error));
    expect(refused).toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringContaining(`${topic} (consumed)`),
    });
    expect(String(refused)).not.toContain(`${present} (consumed)`);
    // A topic an ACL hides from this client is not listed either: the error cannot tell them apart.
    expect(String(refused)).toContain('hidden from this client by an ACL without Describe');
    await ensureTopics(connection, [{ topic }, { topic: `${topic}.dlq` }]);
    await handle.ready({ timeoutMs: 30_000 });
  } finally {
    await handle?.close();
    await deleteGroups(connection, [groupId]).catch(() => undefined);
    await deleteTopics(connection, [topic, `${topic}.dlq`]).catch(() => undefined);
  }
});
