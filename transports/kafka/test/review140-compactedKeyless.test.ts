/**
 * Review 140 (the outbox relay through KafkaPublisher against real broker answers): an event
 * without an ordering key (a record without a key) published to a compacted topic
 * (cleanup.policy=compact), which the broker refuses (INVALID_RECORD, "Compacted topic cannot
 * accept message without key"). It was `permanent` alone, its keyed neighbours sent, but the
 * reason it went FAILED with did not say why: on kafkajs only "This record has failed the
 * validation on broker (INVALID_RECORD)" (its Produce v7 answer carries no broker text), on
 * @platformatic/kafka "The server experienced an unexpected error (UNKNOWN_SERVER_ERROR)", the
 * stand-in the client makes of the broker's record error, named before the partition's own
 * INVALID_RECORD, with the broker's text left out.
 */
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { outboxMessage, readBack, testConnection, uniqueName } from './support';

const connection = testConnection();
const name = uniqueName('compacted-keyless');
const never = new AbortController().signal;

beforeAll(async () => {
  await ensureTopics(connection, [{ topic: name, configs: { 'cleanup.policy': 'compact' } }]);
});

afterAll(async () => {
  await deleteTopics(connection, [name]);
});

test('an event without a key to a compacted topic is permanent alone, with a reason naming the refusal; its neighbours are sent', async () => {
  const publisher = new KafkaPublisher(connection, { defaultDestination: name });
  const before = outboxMessage({ orderingKey: 'a' });
  const keyless = outboxMessage({ orderingKey: null });
  const after = outboxMessage({ orderingKey: 'b' });
  try {
    const outcomes = await publisher.publish([before, keyless, after], never);
    expect(outcomes.map((outcome) => [outcome.id, outcome.status])).toEqual([
      [before.id, 'sent'],
      [keyless.id, 'permanent'],
      [after.id, 'sent'],
    ]);
    const reason = outcomes[1]!.error!;
    expect(reason).toContain('INVALID_RECORD');
    expect(reason).not.toContain('UNKNOWN_SERVER_ERROR');
    expect(reason).toContain('compacted topic');
    expect(reason).toContain('without a key');
  } finally {
    await publisher.close();
  }
  const records = await readBack(connection, name, 2);
  expect(records.map((record) => record.key)).toEqual(['a', 'b']);
});
