import { deleteTopics, ensureTopics } from '../src';
import { testConnection, uniqueName } from './support';

const connection = testConnection();

describe('ensureTopics against a real broker', () => {
  test('topics created concurrently all come back with leaders (metadata may lag the creation)', async () => {
    // kafkajs's own wait for leaders gives up on UNKNOWN_TOPIC_OR_PARTITION, which a broker
    // answers while a just-created topic's metadata has not propagated; many creations at once
    // make that window show up.
    const names = Array.from({ length: 12 }, () => uniqueName('topology'));
    const results = await Promise.allSettled(
      names.map((topic) => ensureTopics(connection, [{ topic, partitions: 3 }, { topic: `${topic}.dlq` }])),
    );
    try {
      const failures = results.flatMap((result) =>
        result.status === 'rejected' ? [String(result.reason)] : [],
      );
      expect(failures).toEqual([]);
      const created = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
      expect(created.sort()).toEqual(names.flatMap((name) => [name, `${name}.dlq`]).sort());
    } finally {
      await deleteTopics(
        connection,
        names.flatMap((name) => [name, `${name}.dlq`]),
      ).catch(() => undefined);
    }
  });
});
