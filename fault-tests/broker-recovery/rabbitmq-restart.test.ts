/**
 * Scenario rabbitmq-restart.
 *
 * Invariants:
 * 1. Consumer side: a private RabbitMQ node is stopped while deliveries are in flight and unacked,
 *    some of them already committed by the inbox (their acks die with the channel). After the
 *    restart the broker redelivers them; the inbox absorbs every redelivery, so each message's
 *    business row is written exactly once, nothing is lost and every receipt is COMPLETED.
 * 2. Outbox side: the relay publishes through RabbitPublisher (persistent, confirms) while the node
 *    is killed (SIGKILL) and started again. An event is SENT only after the broker confirmed it:
 *    every SENT event is read back from the durable queue (nothing SENT was lost by the crash), all
 *    events end SENT, and the inbox behind the queue applies each event once.
 */
import amqp from 'amqplib';
import { FERRY_HEADERS, createRelay, emitMany, type Relay } from '@ferry/core';
import type { InboxAcceptInput, InboxAcceptResult, InboxAcceptor } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import type { TestDatabase } from '../../test-support/database';
import { assertLedger } from '../harness/ledger';
import { RabbitNode } from '../harness/rabbitmqNode';
import { waitFor } from '../harness/waitFor';
import {
  effectIds,
  inboxLedger,
  messageIds,
  openDatabase,
  receiptCounts,
  settle,
  startInbox,
} from './support';
import { faultSuite, cleanUp, CLEANUP_HOOK_MS, BROKER_CLEANUP_MS } from '../harness/scaffold';

jest.setTimeout(180_000);

/** The real inbox behind a gate: while closed, acceptMany calls wait (a slow database). */
class GatedAcceptor implements InboxAcceptor {
  waiting = 0;
  calls = 0;
  /** Close the gate by itself once this many calls went through. */
  closeAfterCalls = Infinity;
  private closed = false;
  private opened: () => void = () => undefined;
  private gate: Promise<void> = Promise.resolve();

  constructor(private readonly inner: InboxAcceptor) {}

  get maxPayloadBytes(): number {
    return this.inner.maxPayloadBytes;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.gate = new Promise((resolve) => (this.opened = resolve));
  }

  open(): void {
    this.closeAfterCalls = Infinity;
    this.closed = false;
    this.opened();
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.calls += 1;
    if (this.calls > this.closeAfterCalls) this.close();
    if (!this.closed) return this.inner.acceptMany(inputs);
    this.waiting += 1;
    try {
      await this.gate;
      return await this.inner.acceptMany(inputs);
    } finally {
      this.waiting -= 1;
    }
  }
}

async function publishBurst(url: string, queue: string, ids: readonly string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createConfirmChannel();
    for (const id of ids) {
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ id })), {
        persistent: true,
        contentType: 'application/json',
        messageId: id,
        headers: { [FERRY_HEADERS.messageId]: id },
      });
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

async function queueDepth(url: string, queue: string): Promise<number> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await connection.close();
  }
}

/** The relay case's durable work queue (the consumer case's orderly stop can write it to disk). */
const RELAY_QUEUE = 'fault.rr.relay';
const RELAY_CONSUMER = 'rr_relay';

/** Declares `queue` as ferry's consumer does (with its retry and dead-letter queues), then detaches. */
async function declareWorkQueue(url: string, queue: string, consumer: string): Promise<void> {
  const connection = new RabbitConnection({ url, connectionName: 'fault-rr-declare' });
  try {
    const refuse: InboxAcceptor = {
      maxPayloadBytes: 1024 * 1024,
      acceptMany: () => Promise.reject(new Error('the declaring consumer accepts nothing')),
    };
    const probe = attachRabbitConsumer(refuse, { connection, queue, consumer });
    await probe.ready();
    await probe.close();
  } finally {
    await connection.close();
  }
}

describe('broker-recovery: rabbitmq-restart', () => {
  let node: RabbitNode;
  let database: TestDatabase;
  const suite = faultSuite();
  /** Set once an orderly stop of the node came after the relay case's queue was declared. */
  let relayQueueOnDisk = false;

  beforeAll(async () => {
    node = await RabbitNode.create();
    await node.start();
    database = await openDatabase();
    // Declared now, so that the consumer case's orderly stop also writes it to disk: the relay case
    // then needs no orderly restart of its own (a node start is seconds).
    await declareWorkQueue(node.url, RELAY_QUEUE, RELAY_CONSUMER);
  });

  // Each step runs whatever the earlier one did (a drop that fails must not leave the node up).
  afterAll(
    () => cleanUp([() => database?.drop(), () => node?.dispose()], BROKER_CLEANUP_MS),
    CLEANUP_HOOK_MS,
  );

  it('redelivers unacked deliveries after a restart and the inbox absorbs them', async () => {
    const consumerName = 'rr_consumer';
    const queue = 'fault.rr.consumer';
    const { inbox, counters } = await startInbox(database.prisma, consumerName);
    suite.defer(() => inbox.close());
    const gated = new GatedAcceptor(inbox);
    suite.defer(async () => gated.open());
    const connection = new RabbitConnection({
      url: node.url,
      connectionName: 'fault-rr-consumer',
      reconnectBackoff: { initialMs: 100, maxMs: 1000 },
    });
    suite.defer(() => connection.close());
    const consumer: RabbitConsumer = attachRabbitConsumer(gated, {
      connection,
      queue,
      consumer: consumerName,
      prefetch: 50,
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const ids = messageIds(400, 'rr');
    // Let two batches through (at most 50 deliveries each), then hold acceptance so that the rest
    // of the burst sits unacked in the consumer.
    gated.closeAfterCalls = 2;
    await publishBurst(node.url, queue, ids);
    await waitFor('a batch held in acceptance', () => gated.waiting >= 1);

    await node.stop();
    relayQueueOnDisk = true;
    // The held batches now commit in PostgreSQL, but their acks go to a dead channel.
    gated.open();
    await waitFor('held batches committed', () => gated.waiting === 0);
    const committedWhileDown = await receiptCounts(database.db, consumerName);
    await node.start();

    const done = await settle(
      'every message applied and the queue drained',
      async () =>
        (await effectIds(database.db, consumerName)).length >= ids.length &&
        ((await receiptCounts(database.db, consumerName)).COMPLETED ?? 0) >= ids.length &&
        (await queueDepth(node.url, queue)) === 0,
      60_000,
    );
    const ledger = await inboxLedger(database.db, consumerName, ids, ids.length, counters);
    assertLedger('rabbitmq-restart/consumer', ledger);
    expect(done).toBe(true);
    expect(Object.values(committedWhileDown).reduce((a, b) => a + b, 0)).toBeLessThan(ids.length);
    // The restart did redeliver committed-but-unacked messages, and they were absorbed.
    expect(ledger.duplicatesAbsorbed).toBeGreaterThan(0);
  });

  it('relays the outbox through a broker crash: nothing SENT unconfirmed, everything SENT and applied once', async () => {
    const consumerName = RELAY_CONSUMER;
    const queue = RELAY_QUEUE;
    const { inbox, counters } = await startInbox(database.prisma, consumerName);
    suite.defer(() => inbox.close());
    const connection = new RabbitConnection({
      url: node.url,
      connectionName: 'fault-rr-relay',
      reconnectBackoff: { initialMs: 100, maxMs: 1000 },
    });
    suite.defer(() => connection.close());
    // The durable work queue was declared before the file's cases (declareWorkQueue); no consumer is
    // attached while the relay runs, so the queue holds exactly what the broker confirmed.
    // An orderly stop writes the queue's definition to disk. A node SIGKILLed seconds after a
    // declaration can come back without the queue (seen in CI: NOT_FOUND after the restart, and the
    // messages it had confirmed gone with it): a broker's loss, not what this case is about. Queues in
    // production are declared long before a crash; this case crashes the node while it publishes.
    // The consumer case's stop did it, unless that case did not run (jest -t): then restart here.
    if (!relayQueueOnDisk) await node.restart('stop');

    const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 3000 });
    suite.defer(() => publisher.close());
    const sentIds = new Set<string>();
    // Printed when not every event got SENT: why the relay's last attempts did not succeed.
    let lastOther = 'none';
    const relay: Relay = createRelay({
      db: database.db,
      publisher,
      options: {
        pollInterval: 50,
        batchSize: 25,
        retry: { backoff: 'fixed', initialDelay: 200, maxDelay: 200 },
      },
      observer: (event) => {
        if (event.type === 'sent') sentIds.add(event.id);
        else lastOther = JSON.stringify(event).slice(0, 500);
      },
    });
    suite.defer(() => relay.close());

    const total = 600;
    const ids: string[] = [];
    for (let i = 0; i < total; i += 100) {
      const { ids: batch } = await emitMany(
        database.prisma,
        Array.from({ length: 100 }, (_, k) => ({
          type: 'fault.rr',
          destination: `/${queue}`,
          payload: { n: i + k },
          maxRetries: 1000,
        })),
      );
      ids.push(...batch);
    }
    relay.start();
    await waitFor('a quarter SENT', () => (sentIds.size >= total / 4 ? true : undefined), {
      timeoutMs: 60_000,
    });
    await node.kill();
    const sentBeforeCrash = sentIds.size;
    await node.start();

    const allSent = await settle(
      'every event SENT',
      async () => {
        const rows = await database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
        );
        return rows[0]!.n === total;
      },
      60_000,
    );
    if (!allSent) {
      const depth = await queueDepth(node.url, queue).catch((error: unknown) => String(error));
      console.log(
        `rabbitmq-restart/relay: not all SENT (${sentIds.size}/${total}); queue depth ${depth}; ` +
          `the relay's last other event: ${lastOther}`,
      );
    }
    await relay.close();
    // Every event the relay called SENT must be on the queue (the crash came after its confirm).
    const consumer = attachRabbitConsumer(inbox, { connection, queue, consumer: consumerName });
    suite.defer(() => consumer.close());
    await consumer.ready();
    await settle(
      'the queue drained into the inbox and every receipt completed',
      async () =>
        (await queueDepth(node.url, queue)) === 0 &&
        ((await receiptCounts(database.db, consumerName)).COMPLETED ?? 0) >= sentIds.size,
      60_000,
    );
    const ledger = await inboxLedger(database.db, consumerName, ids, total, counters);
    assertLedger('rabbitmq-restart/relay', ledger);
    expect(allSent).toBe(true);
    expect(sentBeforeCrash).toBeLessThan(total);
    expect(sentIds.size).toBe(total);
  });
});
