import { deleteTopics, ensureTopics, type TopicSpec } from '../src';
import { closedPort } from '../../../test-support/closedPort';
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

describe('ensureTopics checks its specs', () => {
  test.each([
    ['topics[0].numPartitions', [{ topic: 'never-created', numPartitions: 3 }]],
    ['topics[1].replicas', [{ topic: 'never-created' }, { topic: 'never-created-2', replicas: 3 }]],
    ['topics[0].configEntries', [{ topic: 'never-created', configEntries: [] }]],
  ])('refuses the unknown key %s before it connects', async (option, specs) => {
    // Brokers nobody listens on: a refusal that came from a connect would be a transport error.
    const unreachable = testConnection({ brokers: [`127.0.0.1:${await closedPort()}`] });
    await expect(ensureTopics(unreachable, specs as unknown as TopicSpec[])).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option,
      message: expect.stringContaining('is not a known option'),
    });
  });

  test('refuses a spec that is not an object', async () => {
    await expect(ensureTopics(connection, [null as unknown as TopicSpec])).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'topics[0]',
    });
  });
});
