/**
 * Scenario kafka-restart.
 *
 * Invariant: a private single-node Kafka broker is killed (SIGKILL) and started again while the
 * outbox relay publishes keyed events to a 3-partition topic through KafkaPublisher and while a
 * ferry Kafka consumer (attachKafkaConsumer) accepts the topic into the inbox.
 * - The relay reports nothing sent that the broker did not acknowledge: every event the relay
 *   marked SENT is read back from the topic, all events end SENT and are read back, and per-key
 *   order holds in the read-back (a key's sequence never goes backwards; a re-published event can
 *   only repeat right after itself).
 * - The consumer rejoins its group after the restart and resumes from its committed offsets;
 *   re-reads and the relay's re-publishes are absorbed by the inbox, so every event's business row
 *   is written exactly once and every receipt is COMPLETED.
 * The scenario runs once per Kafka client (kafkajs, @platformatic/kafka), one after the other on
 * the file's one private broker (each client on its own topic and groups; a broker start is ~15 s).
 */
import { createRelay, type Relay } from '@ferry/core';
import { emitMany } from '@ferry/core';
import {
  KafkaConnection,
  KafkaPublisher,
  attachKafkaConsumer,
  ensureTopics,
  type KafkaClientName,
  type KafkaInboxConsumer,
} from '@ferry/kafka';
import type { TestDatabase } from '../../test-support/database';
import { PrivateBroker } from '../harness/brokers';
import { assertLedger, keyOrderViolations } from '../harness/ledger';
import { waitFor } from '../harness/waitFor';
import { inboxLedger, openDatabase, receiptCounts, settle, startInbox } from './support';
import { faultSuite, cleanUp, CLEANUP_HOOK_MS, BROKER_CLEANUP_MS } from '../harness/scaffold';

jest.setTimeout(180_000);

const BASE_TOPIC = 'fault.kafka.orders';
const KEYS = 12;
const TOTAL = 480;
const CLIENTS: readonly KafkaClientName[] = ['kafkajs', 'platformatic'];

let broker: PrivateBroker;
beforeAll(async () => {
  broker = await PrivateBroker.create('kafka');
  await broker.start();
});
afterAll(() => cleanUp([() => broker?.dispose()], BROKER_CLEANUP_MS), CLEANUP_HOOK_MS);

describe.each(CLIENTS)('broker-recovery: kafka-restart (%s client)', (client) => {
  const TOPIC = `${BASE_TOPIC}.${client}`;
  let database: TestDatabase;
  const suite = faultSuite();

  beforeAll(async () => {
    database = await openDatabase();
  });

  afterAll(() => cleanUp([() => database?.drop()]));

  it('relays and consumes across a broker kill: all SENT events on the topic in key order, applied once', async () => {
    const consumerName = 'kr_consumer';
    const connection = new KafkaConnection({
      brokers: broker.brokers,
      client,
      clientId: 'fault-kafka',
      connectionTimeoutMs: 1000,
      requestTimeoutMs: 5000,
      kafkaLogLevel: 'nothing',
    });
    await ensureTopics(connection, [
      { topic: TOPIC, partitions: 3 },
      { topic: `${TOPIC}.dlq`, partitions: 1 },
    ]);

    const { inbox, counters } = await startInbox(database.prisma, consumerName);
    suite.defer(() => inbox.close());
    const consumer: KafkaInboxConsumer = attachKafkaConsumer(inbox, {
      connection,
      topic: TOPIC,
      groupId: `fault-kafka-group-${client}`,
      consumer: consumerName,
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1000,
      maxWaitTimeMs: 500,
      maxBatchSize: 50,
      retryBackoff: { initialMs: 200, maxMs: 2000 },
      reconnectBackoff: { initialMs: 500, maxMs: 2000 },
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const publisher = new KafkaPublisher(connection, { confirmTimeoutMs: 5000, producerRetries: 2 });
    suite.defer(() => publisher.close());
    const sentIds = new Set<string>();
    const relay: Relay = createRelay({
      db: database.db,
      publisher,
      options: {
        pollInterval: 50,
        batchSize: 24,
        retry: { backoff: 'fixed', initialDelay: 300, maxDelay: 300 },
      },
      observer: (event) => void (event.type === 'sent' && sentIds.add(event.id)),
    });
    suite.defer(() => relay.close());

    const seqById = new Map<string, { key: string; seq: number }>();
    const ids: string[] = [];
    for (let i = 0; i < TOTAL; i += 120) {
      const events = Array.from({ length: 120 }, (_, k) => {
        const n = i + k;
        return { key: `key-${n % KEYS}`, seq: Math.floor(n / KEYS) };
      });
      const { ids: batch } = await emitMany(
        database.prisma,
        events.map((e) => ({
          type: 'fault.kafka',
          destination: TOPIC,
          orderingKey: e.key,
          payload: e,
          maxRetries: 1000,
        })),
      );
      batch.forEach((id, k) => seqById.set(id, events[k]!));
      ids.push(...batch);
    }

    relay.start();
    await waitFor('a quarter SENT', () => (sentIds.size >= TOTAL / 4 ? true : undefined), {
      timeoutMs: 60_000,
    });
    await broker.kill();
    const sentAtCrash = sentIds.size;
    await broker.start();

    const allSent = await settle(
      'every event SENT',
      async () => {
        const rows = await database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
        );
        return rows[0]!.n === TOTAL;
      },
      60_000,
    );
    const consumed = await settle(
      'every event accepted and completed by the inbox',
      async () => ((await receiptCounts(database.db, consumerName)).COMPLETED ?? 0) >= TOTAL,
      60_000,
    );
    await relay.close();

    // Read the topic back from the beginning with a fresh group.
    const readBack: { id: string; key: string; seq: number }[] = [];
    const reader = connection.kafka.consumer({ groupId: `fault-kafka-readback-${Date.now()}` });
    suite.defer(() => reader.disconnect());
    await reader.connect();
    await reader.subscribe({ topic: TOPIC, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.['x-ferry-message-id']?.toString() ?? '';
        const value = JSON.parse(message.value!.toString()) as { key: string; seq: number };
        readBack.push({ id, key: message.key!.toString(), seq: value.seq });
      },
    });
    await settle(
      'every event read back',
      async () => new Set(readBack.map((r) => r.id)).size >= TOTAL,
      30_000,
    );
    await reader.disconnect();

    const orderViolations = keyOrderViolations(readBack);
    const onTopic = new Set(readBack.map((r) => r.id));
    const sentButMissing = [...sentIds].filter((id) => !onTopic.has(id));

    const ledger = await inboxLedger(database.db, consumerName, ids, TOTAL, counters);
    // Lost also counts what the relay reported SENT but the topic does not hold.
    ledger.lost += sentButMissing.length;
    process.stdout.write(
      `kafka-restart: sent before the kill ${sentAtCrash}, records read back ${readBack.length} ` +
        `(distinct ${onTopic.size}), order violations ${orderViolations.length}\n`,
    );
    assertLedger('kafka-restart', ledger);
    expect({ allSent, consumed, orderViolations, sentButMissing }).toEqual({
      allSent: true,
      consumed: true,
      orderViolations: [],
      sentButMissing: [],
    });
    expect(sentAtCrash).toBeLessThan(TOTAL);
    expect(ids.every((id) => onTopic.has(id))).toBe(true);
    expect(seqById.size).toBe(TOTAL);
  });
});
