/**
 * Scenario rabbitmq-retry-and-dlq.
 *
 * Invariants:
 * 1. Transport retries: PostgreSQL refuses every acceptance for one consumer (a trigger on
 *    ferry_inbox_receipts raises for it: SQLSTATE P0001, FERRY_DATABASE_ERROR, an error of unknown
 *    cause and not an outage, which the consumer would hold unacked instead), so each delivery is
 *    copied to the retry tier queue of
 *    its delay (queue TTL) and comes back to the work queue when it expires. The private RabbitMQ node is
 *    stopped while copies sit in the retry queue; they are persistent, survive the restart, keep
 *    their trip count, and after maxTransportRetries trips each message lands in the DLQ with
 *    reason transport_retries_exhausted. Nothing is stored in the inbox, nothing is lost, nothing
 *    stays in the work or retry queue. (The ledger counts a DLQ copy as the message's terminal
 *    effect here.) Run twice: with the consumer closed before the stop, each message lands in the
 *    DLQ exactly once; with it attached through the stop, a delivery the stop cuts between its
 *    retry copy and its ack is delivered again and copied again (the at-least-once copy the
 *    RabbitMQ README documents), so that case counts DLQ copies by distinct id and prints repeats.
 *    `rabbitmqctl stop` is slow under load: how many deliveries it cuts is a race with the broker.
 * 2. Persisted inbox retries: the handler fails the first two attempts of every message. Receipts
 *    wait as RETRYABLE in PostgreSQL while the node is stopped and started; the producer publishes
 *    everything again after the restart. Every message completes on its third attempt with exactly
 *    one business row, and the re-published copies are absorbed as duplicates.
 */
import amqp from 'amqplib';
import { FERRY_HEADERS, INBOX_TABLE } from '@ferry/core';
import { RabbitConnection, attachRabbitConsumer, type RabbitConsumer } from '@ferry/rabbitmq';
import type { TestDatabase } from '../../test-support/database';
import { assertLedger, reconcile } from '../harness/ledger';
import { RabbitNode } from '../harness/rabbitmqNode';
import { waitFor } from '../harness/waitFor';
import {
  EFFECTS_TABLE,
  inboxLedger,
  messageIds,
  openDatabase,
  receiptCounts,
  settle,
  startInbox,
} from './support';
import { faultSuite, cleanUp, CLEANUP_HOOK_MS, BROKER_CLEANUP_MS } from '../harness/scaffold';

jest.setTimeout(300_000);

async function withChannel<T>(url: string, work: (channel: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(url);
  try {
    return await work(await connection.createConfirmChannel());
  } finally {
    await connection.close();
  }
}

function publishAll(url: string, queue: string, ids: readonly string[]): Promise<void> {
  return withChannel(url, async (channel) => {
    for (const id of ids) {
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ id })), {
        persistent: true,
        contentType: 'application/json',
        headers: { [FERRY_HEADERS.messageId]: id },
      });
    }
    await channel.waitForConfirms();
  });
}

function depth(url: string, queue: string): Promise<number> {
  return withChannel(url, async (channel) => (await channel.checkQueue(queue)).messageCount);
}

/** Takes every message off `queue` (acked), returning id, reject reason and trip count. */
function drain(url: string, queue: string): Promise<{ id: string; reason: string; attempts: number }[]> {
  return withChannel(url, async (channel) => {
    const out: { id: string; reason: string; attempts: number }[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) return out;
      const headers = message.properties.headers ?? {};
      out.push({
        id: String(headers[FERRY_HEADERS.messageId]),
        reason: String(headers[FERRY_HEADERS.rejectReason]),
        attempts: Number(headers[FERRY_HEADERS.transportAttempts] ?? 0),
      });
    }
  });
}

/** The message ids on `queue`, left on it (read unacked, then the channel closes). */
function peekIds(url: string, queue: string): Promise<string[]> {
  return withChannel(url, async (channel) => {
    const out: string[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: false });
      if (message === false) return out;
      out.push(String(message.properties.headers?.[FERRY_HEADERS.messageId]));
    }
  });
}

describe('broker-recovery: rabbitmq-retry-and-dlq', () => {
  let node: RabbitNode;
  let database: TestDatabase;
  const suite = faultSuite();

  beforeAll(async () => {
    node = await RabbitNode.create();
    await node.start();
    database = await openDatabase();
  });

  // Each step runs whatever the earlier one did (a drop that fails must not leave the node up).
  afterAll(
    () => cleanUp([() => database?.drop(), () => node?.dispose()], BROKER_CLEANUP_MS),
    CLEANUP_HOOK_MS,
  );

  /** Whether the consumer stays attached while the node stops (`live`) or is closed first. */
  type Attachment = 'closed' | 'live';

  it.each<Attachment>(['closed', 'live'])(
    'routes refused deliveries through the persistent retry queue across a restart, then to the DLQ (consumer %s at the stop)',
    async (attachment) => {
      const consumerName = `rd_refused_${attachment}`;
      const queue = `fault.rd.refused.${attachment}`;
      const maxTransportRetries = 3;
      // PostgreSQL refuses every receipt of this consumer.
      await database.db.query(
        `CREATE OR REPLACE FUNCTION fault_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'fault: acceptance refused'; END $$`,
      );
      await database.db.query(
        `CREATE TRIGGER fault_refuse_${attachment} BEFORE INSERT ON ${INBOX_TABLE}
         FOR EACH ROW WHEN (NEW.consumer = '${consumerName}') EXECUTE FUNCTION fault_refuse()`,
      );
      const { inbox } = await startInbox(database.prisma, consumerName);
      suite.defer(() => inbox.close());
      const connection = new RabbitConnection({
        url: node.url,
        connectionName: `fault-rd-refused-${attachment}`,
        reconnectBackoff: { initialMs: 100, maxMs: 1000 },
      });
      suite.defer(() => connection.close());
      const attach = (): RabbitConsumer => {
        const attached = attachRabbitConsumer(inbox, {
          connection,
          queue,
          consumer: consumerName,
          maxTransportRetries,
          retryBackoff: { initialMs: 2000, maxMs: 2000, multiplier: 1, jitter: 'none' },
        });
        suite.defer(() => attached.close());
        return attached;
      };
      let consumer = attach();
      await consumer.ready();
      // One delay tier (2 s): its retry queue is <queue>.retry.2000ms.
      const retryQueue = consumer.names.retryQueues[0]!;

      const ids = messageIds(40, `rd${attachment[0]}`);
      await publishAll(node.url, queue, ids);
      const inRetry = await waitFor('copies waiting in the retry queue', async () => {
        const n = await depth(node.url, retryQueue);
        return n >= ids.length / 2 ? n : undefined;
      });
      if (attachment === 'closed') await consumer.close();
      await node.stop();
      await node.start();
      if (attachment === 'closed') {
        consumer = attach();
        await consumer.ready();
      }

      const done = await settle(
        'every message dead-lettered and both queues empty',
        async () =>
          new Set((await peekIds(node.url, `${queue}.dlq`)).filter((id) => ids.includes(id))).size >=
            ids.length &&
          (await depth(node.url, queue)) === 0 &&
          (await depth(node.url, retryQueue)) === 0 &&
          // Nor any delivery the consumer still settles (a copy the stop cut, delivered again):
          // closed in the middle of its dead-letter copy, it goes back to the queue, read as stuck.
          (await node.unacknowledged(queue)) === 0,
        120_000,
      );
      await consumer.close();
      const stillQueued = (await depth(node.url, queue)) + (await depth(node.url, retryQueue));
      const dead = await drain(node.url, `${queue}.dlq`);
      const receipts = await receiptCounts(database.db, consumerName);
      const deadIds = dead.map((d) => d.id);
      const repeats = deadIds.length - new Set(deadIds).size;
      const ledger = {
        offered: ids.length,
        accepted: Object.values(receipts).reduce((a, b) => a + b, 0),
        duplicatesAbsorbed: 0,
        // Attached through the stop, a cut delivery is copied again (at least once): distinct ids.
        ...reconcile(ids, attachment === 'closed' ? deadIds : new Set(deadIds)),
        stuck: stillQueued,
      };
      process.stdout.write(
        `rabbitmq-retry-and-dlq (${attachment}): ${inRetry} copies were in the retry queue at the stop; ` +
          `${repeats} repeated DLQ copies\n`,
      );
      assertLedger(`rabbitmq-retry-and-dlq/transport-retries-${attachment}`, ledger);
      expect(done).toBe(true);
      expect(ledger.accepted).toBe(0);
      expect(new Set(dead.map((d) => d.reason))).toEqual(new Set(['transport_retries_exhausted']));
      expect(new Set(dead.map((d) => d.attempts))).toEqual(new Set([maxTransportRetries]));
    },
  );

  it('keeps persisted inbox handler retries across a restart and completes each message once', async () => {
    const consumerName = 'rd_retrying';
    const queue = 'fault.rd.retrying';
    const { inbox, counters } = await startInbox(database.prisma, consumerName, {
      worker: { retryBaseMs: 2500, retryMaxMs: 2500 },
      fail: (_id, attempt) => {
        if (attempt <= 2) throw new Error(`fault: transient handler failure (attempt ${attempt})`);
      },
    });
    suite.defer(() => inbox.close());
    const connection = new RabbitConnection({
      url: node.url,
      connectionName: 'fault-rd-retrying',
      reconnectBackoff: { initialMs: 100, maxMs: 1000 },
    });
    suite.defer(() => connection.close());
    const consumer: RabbitConsumer = attachRabbitConsumer(inbox, {
      connection,
      queue,
      consumer: consumerName,
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const ids = messageIds(60, 'rh');
    await publishAll(node.url, queue, ids);
    await waitFor('receipts waiting for a retry', async () => {
      const counts = await receiptCounts(database.db, consumerName);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      return total === ids.length && (counts.RETRYABLE ?? 0) > 0;
    });
    await node.stop();
    await node.start();
    // The producer did not know what got through before the restart and sends everything again.
    await publishAll(node.url, queue, ids);

    const done = await settle(
      'every receipt completed and the queue drained',
      async () =>
        ((await receiptCounts(database.db, consumerName)).COMPLETED ?? 0) === ids.length &&
        counters.duplicates >= ids.length &&
        (await depth(node.url, queue)) === 0,
      60_000,
    );
    const ledger = await inboxLedger(database.db, consumerName, ids, ids.length * 2, counters);
    assertLedger('rabbitmq-retry-and-dlq/inbox-retries', ledger);
    const attempts = await database.db.query<{ attempt: number; n: number }>(
      `SELECT attempt, count(*)::int AS n FROM ${EFFECTS_TABLE} WHERE consumer = $1 GROUP BY attempt`,
      [consumerName],
    );
    expect(done).toBe(true);
    // Every business row was written by the third attempt: the two failures were persisted retries.
    expect(attempts).toEqual([{ attempt: 3, n: ids.length }]);
    expect(counters.retries).toBeGreaterThanOrEqual(ids.length * 2);
  });
});
