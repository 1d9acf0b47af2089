/**
 * Scenario sqs-restart.
 *
 * Invariant: a private ElasticMQ (the SQS endpoint) is killed (SIGKILL) and started again while the
 * outbox relay sends a backlog to a standard queue through SqsPublisher and while a ferry SQS
 * consumer (attachSqsConsumer) drains that queue into the inbox.
 * - The relay reports nothing SENT that an endpoint did not accept: no publish call issued while
 *   the endpoint was down (process gone, queue not yet re-created) comes back `sent`; every event
 *   ends SENT.
 * - Everything the endpoint is responsible for keeping arrives exactly once: every event accepted
 *   by the restarted endpoint, and every message that reached the inbox, has exactly one business
 *   row, and every receipt is COMPLETED. The consumer lives through the outage (failed polls are
 *   backed off) and resumes on the re-created queue with the same URL.
 *
 * ElasticMQ keeps queues and messages in memory, so the restart loses the queue and every message
 * the first incarnation still held. The test re-creates the queue after the restart (real SQS keeps
 * both queues and messages). Events accepted by the first incarnation are SENT in the outbox and
 * are, by design, not published again (ferry's delivery guarantee ends at the endpoint's
 * acknowledgement, and admin `retry` applies to FAILED events only). Those that had not reached
 * the inbox before the kill are a property of the test endpoint: the ledger does not count them
 * as lost; they are printed beside it as `elasticmqMemoryLoss`, identified by comparing the ids
 * the first incarnation accepted with the receipts and business rows.
 *
 * Ledger: lost = events never SENT + events the second incarnation accepted without a business
 * row + messages with a receipt but no business row + SENT events no publish call accounts for.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { createRelay, emitMany, INBOX_TABLE, type Relay } from '@ferry/core';
import { SqsConnection, SqsPublisher, attachSqsConsumer, declareQueue, type SqsConsumer } from '@ferry/sqs';
import type { TestDatabase } from '../../test-support/database';
import { PrivateBroker } from '../harness/brokers';
import { assertLedger, reconcile, type Ledger } from '../harness/ledger';
import { waitFor } from '../harness/waitFor';
import { effectIds, openDatabase, receiptCounts, settle, startInbox } from './support';
import { PhasedPublisher } from './sqsPhases';
import { faultSuite, cleanUp, CLEANUP_HOOK_MS, BROKER_CLEANUP_MS } from '../harness/scaffold';

jest.setTimeout(120_000);

const QUEUE = 'fault-sqs-orders';
const TOTAL = 1500;
/** SENT before the kill (first incarnation). */
const SENT_BEFORE_KILL = 200;
/** Messages the consumer accepted into the inbox before the kill. */
const CONSUMED_BEFORE_KILL = 50;

describe('broker-recovery: sqs-restart', () => {
  let broker: PrivateBroker;
  let database: TestDatabase;
  const suite = faultSuite();

  // A private ElasticMQ's JVM took over two minutes to answer on a machine at load 17.
  beforeAll(async () => {
    broker = await PrivateBroker.create('elasticmq');
    await broker.start();
    database = await openDatabase();
  }, 240_000);

  // Each step runs whatever the earlier one did (a drop that fails must not leave the broker up).
  afterAll(
    () => cleanUp([() => database?.drop(), () => broker?.dispose()], BROKER_CLEANUP_MS),
    CLEANUP_HOOK_MS,
  );

  it('relays and consumes across an endpoint kill: nothing SENT while down, everything the endpoint kept applied once', async () => {
    const consumerName = 'sr_consumer';
    // maxAttempts 1: the SDK never re-sends a request, so a publish call is answered by the endpoint
    // that was listening when it started (see sqsPhases.ts).
    const connect = () =>
      new SqsConnection({
        endpoint: broker.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
        maxAttempts: 1,
      });
    const relayConnection = connect();
    const consumerConnection = connect();
    suite.defer(
      () => relayConnection.close(),
      () => consumerConnection.close(),
    );
    const declared = await declareQueue(relayConnection, {
      name: QUEUE,
      deadLetter: { maxReceiveCount: 100 },
    });

    const { inbox, counters } = await startInbox(database.prisma, consumerName);
    suite.defer(() => inbox.close());
    let phase: 'first' | 'down' | 'second' = 'first';
    const consumerSeen = { acceptedBefore: 0, acceptedAfter: 0, errorsWhileDown: 0 };
    const consumer: SqsConsumer = attachSqsConsumer(inbox, {
      connection: consumerConnection,
      queueUrl: QUEUE,
      consumer: consumerName,
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 30,
      reconnectBackoff: { initialMs: 100, maxMs: 1000 },
      retryBackoff: { initialMs: 1000, maxMs: 2000 },
      observer: (event) => {
        if (event.type === 'accepted') {
          if (phase === 'second') consumerSeen.acceptedAfter += event.count;
          else consumerSeen.acceptedBefore += event.count;
        }
        // A failed poll is `disconnected`; a failed delete or visibility change is `error`.
        if ((event.type === 'disconnected' || event.type === 'error') && phase === 'down')
          consumerSeen.errorsWhileDown += 1;
      },
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const publisher = new PhasedPublisher(new SqsPublisher(relayConnection));
    suite.defer(() => publisher.close());
    const relay: Relay = createRelay({
      db: database.db,
      publisher,
      options: {
        pollInterval: 50,
        batchSize: 20,
        retry: { backoff: 'fixed', initialDelay: 300, maxDelay: 300 },
      },
    });
    suite.defer(() => relay.close());

    const ids: string[] = [];
    for (let i = 0; i < TOTAL; i += 250) {
      const { ids: batch } = await emitMany(
        database.prisma,
        Array.from({ length: 250 }, (_, k) => ({
          type: 'fault.sqs',
          destination: QUEUE,
          payload: { n: i + k },
          maxRetries: 1000,
        })),
      );
      ids.push(...batch);
    }

    relay.start();
    await waitFor(
      'the relay and the consumer mid-stream',
      () =>
        publisher.sent.first.size >= SENT_BEFORE_KILL && consumerSeen.acceptedBefore >= CONSUMED_BEFORE_KILL,
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await broker.kill();
    publisher.phase = phase = 'down';
    const sentAtKill = publisher.sent.first.size;
    await broker.start();
    // ElasticMQ lost its queues with its memory; real SQS would still have it. Same name, same URL.
    publisher.phase = phase = 'second';
    const recreated = await declareQueue(relayConnection, {
      name: QUEUE,
      deadLetter: { maxReceiveCount: 100 },
    });
    expect(recreated.queueUrl).toBe(declared.queueUrl);

    const outbox = async () =>
      database.db.query<{ id: string; status: string }>(`SELECT id::text AS id, status FROM outbox_events`);
    const allSent = await settle(
      'every event SENT',
      async () => (await outbox()).every((row) => row.status === 'SENT'),
      60_000,
    );
    await relay.close();

    const second = publisher.sent.second;
    const queueAttributes = async () => {
      const output = await consumerConnection.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: recreated.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(output.Attributes?.ApproximateNumberOfMessages ?? -1) +
        Number(output.Attributes?.ApproximateNumberOfMessagesNotVisible ?? -1)
      );
    };
    const drained = await settle(
      'queue drained, every event of the second incarnation applied, every receipt COMPLETED',
      async () => {
        const counts = await receiptCounts(database.db, consumerName);
        const open = Object.entries(counts).filter(([status]) => status !== 'COMPLETED');
        if (open.some(([, n]) => n > 0)) return false;
        const effects = new Set(await effectIds(database.db, consumerName));
        return [...second].every((id) => effects.has(id)) && (await queueAttributes()) === 0;
      },
      60_000,
    );

    const rows = await outbox();
    const sentInDb = new Set(rows.filter((row) => row.status === 'SENT').map((row) => row.id));
    const neverSent = ids.filter((id) => !sentInDb.has(id));
    const effects = await effectIds(database.db, consumerName);
    const applied = new Set(effects);
    const receipts = new Set(
      (
        await database.db.query<{ message_id: string }>(
          `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = $1`,
          [consumerName],
        )
      ).map((row) => row.message_id),
    );
    const firstOnly = [...publisher.sent.first].filter((id) => !second.has(id));
    const unexplainedSent = [...sentInDb].filter((id) => !publisher.sent.first.has(id) && !second.has(id));
    // The part the endpoint is responsible for: what the second incarnation accepted, and whatever
    // reached the inbox (from either incarnation).
    const mustApply = new Set([...second, ...receipts]);
    const elasticmqMemoryLoss = firstOnly.filter((id) => !receipts.has(id) && !applied.has(id));

    const counts = await receiptCounts(database.db, consumerName);
    const accepted = Object.values(counts).reduce((a, b) => a + b, 0);
    const reconciled = reconcile(mustApply, effects);
    const ledger: Ledger = {
      offered: TOTAL,
      accepted,
      duplicatesAbsorbed: counters.duplicates,
      effectsApplied: reconciled.effectsApplied,
      lost: neverSent.length + reconciled.lost + unexplainedSent.length,
      appliedTwice: reconciled.appliedTwice,
      stuck: accepted - (counts.COMPLETED ?? 0) - (counts.DEAD ?? 0),
    };
    process.stdout.write(
      `sqs-restart: SENT by the first incarnation ${publisher.sent.first.size} (${sentAtKill} when the kill ` +
        `was confirmed), SENT while down ${publisher.sent.down.size}, SENT by the second incarnation ` +
        `${second.size}; publish outcomes not sent while down ${publisher.notSent.down}; consumer accepted ` +
        `${consumerSeen.acceptedBefore} before / ${consumerSeen.acceptedAfter} after the restart, ` +
        `${consumerSeen.errorsWhileDown} poll errors while down\n` +
        `sqs-restart: elasticmqMemoryLoss=${elasticmqMemoryLoss.length} (SENT to the first incarnation, ` +
        `dropped with its in-memory queue before reaching the inbox; not counted as lost, real SQS keeps them)\n`,
    );
    assertLedger('sqs-restart', ledger);

    expect({ allSent, drained, sentWhileDown: [...publisher.sent.down], unexplainedSent }).toEqual({
      allSent: true,
      drained: true,
      sentWhileDown: [],
      unexplainedSent: [],
    });
    // The outage was real for both sides, and both resumed after it.
    expect(publisher.notSent.down).toBeGreaterThan(0);
    expect(consumerSeen.errorsWhileDown).toBeGreaterThan(0);
    expect(second.size).toBeGreaterThan(0);
    expect(consumerSeen.acceptedAfter).toBeGreaterThan(0);
    // Every event is accounted for exactly once: applied, or lost with ElasticMQ's memory.
    expect(applied.size + elasticmqMemoryLoss.length).toBe(TOTAL);
  });
});
