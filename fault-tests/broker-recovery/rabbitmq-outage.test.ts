/**
 * Scenario rabbitmq-outage (the RabbitMQ variant of kafka-outage).
 *
 * Invariant: a broker outage does not spend message retries. A private RabbitMQ node is stopped
 * before the relay starts and stays down until the relay's circuit has opened 4 times (longer
 * than maxRetries x initialDelay). RabbitPublisher reports "no connection to publish on" as
 * `unavailable`, so no event is FAILED and no retry_count moves during the outage. After the node
 * is back the circuit closes, every event is SENT and every event is on the queue.
 */
import amqp from 'amqplib';
import { emitMany } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import type { TestDatabase } from '../../test-support/database';
import { assertLedger, emptyLedger, reconcile } from '../harness/ledger';
import { RabbitNode } from '../harness/rabbitmqNode';
import { waitFor } from '../harness/waitFor';
import { openDatabase, settle, startCircuitRelay } from './support';
import { faultSuite } from '../harness/scaffold';

jest.setTimeout(180_000);

const QUEUE = 'fault.ro.relay';
const TOTAL = 60;
const MAX_RETRIES = 3;
const INITIAL_DELAY = 200;
/** Openings of the circuit to wait for: 200 + 400 + 800 ms of open periods > 3 x 200 ms. */
const OPENINGS = 4;

async function readQueue(url: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    for (;;) {
      const message = await channel.get(QUEUE, { noAck: true });
      if (message === false) break;
      if (message.properties.messageId) ids.add(String(message.properties.messageId));
    }
  } finally {
    await connection.close();
  }
  return ids;
}

describe('broker-recovery: rabbitmq-outage', () => {
  let node: RabbitNode;
  let database: TestDatabase;
  const suite = faultSuite();

  beforeAll(async () => {
    node = await RabbitNode.create();
    await node.start();
    database = await openDatabase();
  });

  afterAll(async () => {
    await database?.drop();
    await node?.dispose();
  });

  it('spends no retry while the node is down; everything is SENT and queued after it returns', async () => {
    const admin = await amqp.connect(node.url);
    await (await admin.createChannel()).assertQueue(QUEUE, { durable: true });
    await admin.close();
    const { ids } = await emitMany(
      database.prisma,
      Array.from({ length: TOTAL }, (_, n) => ({
        type: 'fault.rabbitmq.outage',
        destination: `/${QUEUE}`,
        orderingKey: `key-${n % 4}`,
        payload: { n },
        maxRetries: MAX_RETRIES,
      })),
    );
    await node.stop();

    const connection = new RabbitConnection({
      url: node.url,
      connectionName: 'fault-ro-relay',
      reconnectBackoff: { initialMs: 100, maxMs: 1000 },
    });
    suite.defer(() => connection.close());
    const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 1000 });
    suite.defer(() => publisher.close());
    const { relay, circuit } = startCircuitRelay(suite, database.db, publisher, {
      maxRetries: MAX_RETRIES,
      initialDelay: INITIAL_DELAY,
    });
    const counts = async () =>
      (
        await database.db.query<{ failed: number; retried: number; sent: number; stuck: number }>(
          `SELECT count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
             count(*) FILTER (WHERE retry_count > 0)::int AS retried,
             count(*) FILTER (WHERE status = 'SENT')::int AS sent,
             count(*) FILTER (WHERE status <> 'SENT')::int AS stuck FROM outbox_events`,
        )
      )[0]!;
    // Without the circuit the first FAILED row ends the wait (and the test) early.
    await waitFor(
      'the circuit opened and failed its probes (or an event FAILED)',
      async () => (circuit().opened >= OPENINGS || (await counts()).failed > 0 ? true : undefined),
      { timeoutMs: 90_000 },
    );
    const during = await counts();

    await node.start();
    const allSent = await settle('every event SENT', async () => (await counts()).sent === TOTAL, 90_000);
    await relay.close();
    const queued = await readQueue(node.url);
    const after = await counts();
    process.stdout.write(
      `rabbitmq-outage: circuit opened ${circuit().opened}x, closed ${circuit().closed}x; during the outage FAILED ` +
        `${during.failed}, retried ${during.retried}; after: FAILED ${after.failed}, retried ${after.retried}\n`,
    );
    assertLedger('rabbitmq-outage', {
      ...emptyLedger(),
      offered: TOTAL,
      accepted: ids.length,
      ...reconcile(ids, queued),
      stuck: after.stuck,
    });
    expect({
      allSent,
      failedDuring: during.failed,
      retriedDuring: during.retried,
      closed: circuit().closed > 0,
    }).toEqual({
      allSent: true,
      failedDuring: 0,
      retriedDuring: 0,
      closed: true,
    });
    expect(after.failed).toBe(0);
  });
});
