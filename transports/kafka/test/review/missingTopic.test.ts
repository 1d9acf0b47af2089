/**
 * review3 probe: a consumer attached to a topic that does not exist (a typo: `topic: 'order'`).
 * Expected: ready() tells the user which topic is missing (its error names it), whatever the client;
 * the consumer keeps trying (the topic may be created later) and takes it once it exists.
 * Actual (FAILS on kafkajs, passes on @platformatic/kafka, so no twin): ready() rejects
 * "...the last attempt failed: This server does not host this topic-partition", naming no topic;
 * with `topics: [...]` the user cannot tell which one is wrong.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
} from '../../src';
import { PgTestAcceptor, fastGroup, testConnection, uniqueName } from '../support';

test('ready() against a topic that does not exist names the topic', async () => {
  const acceptor = await PgTestAcceptor.create();
  const connection = testConnection();
  const topic = uniqueName('review3-missing');
  const groupId = uniqueName('group');
  const events: TransportConsumerEvent[] = [];
  let handle: KafkaInboxConsumer | null = null;
  let refused: unknown = null;
  try {
    handle = attachKafkaConsumer(acceptor, {
      connection,
      topic,
      groupId,
      consumer: 'review3',
      ...fastGroup,
      reconnectBackoff: { initialMs: 200, maxMs: 500 },
      observer: (event) => events.push(event),
    });
    await handle.ready({ timeoutMs: 10_000 });
  } catch (error) {
    refused = error;
  }
  let joinedAfterCreate = false;
  try {
    if (refused !== null && handle !== null) {
      await ensureTopics(connection, [{ topic }]);
      joinedAfterCreate = await handle.ready({ timeoutMs: 30_000 }).then(
        () => true,
        () => false,
      );
    }
  } finally {
    await handle?.close();
    await deleteGroups(connection, [groupId]).catch(() => undefined);
    await deleteTopics(connection, [topic]).catch(() => undefined);
    await acceptor.drop();
  }
  expect({ refused: String(refused), joinedAfterCreate }).toEqual({
    refused: expect.stringContaining(topic),
    joinedAfterCreate: true,
  });
});
