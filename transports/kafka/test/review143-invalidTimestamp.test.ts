/**
 * Review 143 (a refusal that is the relay's, not the event's, must not spend the event's attempts):
 * ferry sets no record timestamp, so each record carries the relay's clock (CreateTime), and a
 * topic's `message.timestamp.before.max.ms` / `message.timestamp.after.max.ms` refuse every record
 * (INVALID_TIMESTAMP) while the relay's clock is outside those bounds. It was `retryable`: a skewed
 * clock (or a topic's too tight bounds) turned every event FAILED after its attempts, with a reason
 * ("The timestamp of the message is out of acceptable range") that did not say what to fix. Now it
 * is `unavailable` (no attempt spent, the relay's circuit open), its reason naming the relay's
 * clock and the topic's bounds, and the events are SENT once the condition clears. Real broker: a
 * topic with `message.timestamp.before.max.ms=0` refuses every record stamped before the broker
 * received it, which is every record. Nearly: a record that reached the broker within the
 * millisecond it was stamped passed (a quiet machine let both of one run's through), so the
 * records are stamped an hour behind (the clients stamp with Date.now(), set back while the
 * topic is to refuse) against a bound of one minute: every record refused, whatever the machine.
 */
import { createRelay, emitMany, type OutboxEventInput, type Publisher } from '@ferry/core';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { createTestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import {
  brokers,
  outboxMessage,
  readBack,
  silentLogger,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const connection = testConnection();
const never = new AbortController().signal;
const REFUSING = { 'message.timestamp.before.max.ms': '60000' };

/** How far behind the broker the relay's clock is while the topic refuses: far past REFUSING's bound. */
const CLOCK_BEHIND_MS = 3_600_000;

/** Sets this process's clock (Date.now, which the clients stamp records with) back by CLOCK_BEHIND_MS; returns the undo. */
function clockBehind(): () => void {
  const realNow = Date.now;
  Date.now = () => realNow.call(Date) - CLOCK_BEHIND_MS;
  return () => {
    Date.now = realNow;
  };
}

/** Sets the topic's timestamp bound back to Kafka's default (no lower bound). */
async function acceptAnyTimestamp(topic: string): Promise<void> {
  const admin = new Kafka({ brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: [{ name: 'message.timestamp.before.max.ms', value: '9223372036854775807' }],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

test('a topic refusing the relay-stamped timestamps: every message unavailable, the reason naming the clock and the bounds', async () => {
  const topic = uniqueName('ts-refused');
  await ensureTopics(connection, [{ topic, configs: REFUSING }]);
  const publisher = new KafkaPublisher(connection, { defaultDestination: topic });
  const restoreClock = clockBehind();
  try {
    const outcomes = await publisher.publish(
      [outboxMessage({ orderingKey: 'a' }), outboxMessage({ orderingKey: 'b' })],
      never,
    );
    restoreClock();
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['unavailable', 'unavailable']);
    for (const outcome of outcomes) {
      const reason = outcome.status === 'sent' ? '' : outcome.error;
      expect(reason).toContain('INVALID_TIMESTAMP');
      expect(reason).toContain("the relay's clock");
      expect(reason).toContain('message.timestamp.before.max.ms');
    }
  } finally {
    restoreClock();
    await publisher.close();
    await deleteTopics(connection, [topic]);
  }
});

test('through the relay: refused events stay PENDING with no attempt spent, and are SENT once the topic accepts them', async () => {
  const topic = uniqueName('ts-relay');
  await ensureTopics(connection, [{ topic, configs: REFUSING }]);
  const database = await createTestDatabase();
  const publisher = new KafkaPublisher(connection);
  let refused = 0;
  const counting: Publisher = {
    publish: async (messages, signal) => {
      const outcomes = await publisher.publish(messages, signal);
      refused += outcomes.filter((outcome) => outcome.status !== 'sent').length;
      return outcomes;
    },
    close: () => publisher.close(),
  };
  let restoreClock = (): void => undefined;
  const relay = createRelay({
    db: database.db,
    publisher: counting,
    logger: silentLogger,
    options: { retry: { initialDelay: 0, maxDelay: 0 }, circuit: { openMs: 10, maxOpenMs: 50 } },
  });
  const rows = () =>
    database.db.query<{ status: string; retry_count: number; last_error: string | null }>(
      'SELECT status, retry_count, last_error FROM outbox_events ORDER BY seq',
    );
  try {
    const events: OutboxEventInput[] = ['k1', 'k2'].map((key) => ({
      type: 'order.updated',
      destination: topic,
      orderingKey: key,
      payload: { key },
      maxRetries: 2,
    }));
    await emitMany(database.db, events);
    restoreClock = clockBehind();
    // More refusals than the events' attempts: on main both were FAILED after two each.
    await waitFor(
      async () => {
        await relay.runOnce();
        return refused >= 4 || (await rows()).some((row) => row.status === 'FAILED');
      },
      () => `refused ${refused} times`,
    );
    restoreClock();
    // Both refused, neither spent an attempt (on main both were FAILED after two each).
    expect((await rows()).map((row) => [row.status, row.retry_count])).toEqual([
      ['PENDING', 0],
      ['PENDING', 0],
    ]);
    await acceptAnyTimestamp(topic);
    await waitFor(
      async () => {
        await relay.runOnce();
        return (await rows()).every((row) => row.status !== 'PENDING');
      },
      () => 'outbox events still PENDING after the topic accepts them',
    );
    expect((await rows()).map((row) => [row.status, row.retry_count])).toEqual([
      ['SENT', 0],
      ['SENT', 0],
    ]);
    const records = await readBack(connection, topic, 2);
    expect(records.map((record) => record.key).sort()).toEqual(['k1', 'k2']);
  } finally {
    restoreClock();
    await relay.close();
    await publisher.close();
    await deleteTopics(connection, [topic]);
    await database.drop();
  }
});
