/**
 * Scenario kafka-outage.
 *
 * Invariant: a broker outage does not spend message retries. A private single-node Kafka broker
 * is stopped before the relay starts and stays down for longer than maxRetries x initialDelay
 * (the circuit has to open and fail several half-open probes first). KafkaPublisher reports the
 * connection failures as `unavailable`, so the relay releases its claims without counting an
 * attempt and opens its circuit: no event is FAILED and no retry_count moves during the outage.
 * After the broker is back the circuit closes and every event is SENT and read back from the
 * topic.
 * The scenario runs for both Kafka clients (kafkajs, @platformatic/kafka) side by side, through
 * one outage of the file's one private broker (each client with its own database, topic and
 * relay; a broker start is ~15 s, so the outage is shared rather than repeated per client), and
 * each client's case checks its own relay: both clients' connection failures must be classified
 * `unavailable`.
 */
import { emitMany, type Relay } from '@ferry/core';
import { KafkaConnection, KafkaPublisher, ensureTopics, type KafkaClientName } from '@ferry/kafka';
import type { TestDatabase } from '../../test-support/database';
import { PrivateBroker } from '../harness/brokers';
import { assertLedger, emptyLedger, keyOrderViolations, reconcile } from '../harness/ledger';
import { waitFor } from '../harness/waitFor';
import { openDatabase, settle, startCircuitRelay, type CircuitCount } from './support';
import { faultSuite, cleanUp, CLEANUP_HOOK_MS, BROKER_CLEANUP_MS } from '../harness/scaffold';

jest.setTimeout(180_000);

const BASE_TOPIC = 'fault.kafka.outage';
const KEYS = 6;
const TOTAL = 120;
const MAX_RETRIES = 3;
const INITIAL_DELAY = 200;
/** Openings of the circuit to wait for: 200 + 400 + 800 ms of open periods > 3 x 200 ms. */
const OPENINGS = 4;
const CLIENTS: readonly KafkaClientName[] = ['kafkajs', 'platformatic'];

/** One client's side of the outage: its database, events and relay, and what it saw while down. */
interface ClientRun {
  readonly topic: string;
  readonly database: TestDatabase;
  readonly connection: KafkaConnection;
  ids: readonly string[];
  relay?: Relay;
  circuit?: () => CircuitCount;
  during?: { failed: number; retried: number };
}

let broker: PrivateBroker;
const runs = new Map<KafkaClientName, ClientRun>();
// Before the afterAll below: relays and publishers close before the databases and the broker go.
const suite = faultSuite();

/** The FAILED rows of `run`'s database. */
async function failedCount(run: ClientRun): Promise<number> {
  const rows = await run.database.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'FAILED'`,
  );
  return rows[0]!.n;
}

beforeAll(async () => {
  broker = await PrivateBroker.create('kafka');
  await broker.start();
  for (const client of CLIENTS) {
    const database = await openDatabase();
    const topic = `${BASE_TOPIC}.${client}`;
    const connection = new KafkaConnection({
      brokers: broker.brokers,
      client,
      clientId: 'fault-kafka-outage',
      connectionTimeoutMs: 1000,
      requestTimeoutMs: 3000,
      kafkaLogLevel: 'nothing',
    });
    const run: ClientRun = { topic, database, connection, ids: [] };
    runs.set(client, run);
    await ensureTopics(connection, [{ topic, partitions: 3 }]);
    const { ids } = await emitMany(
      database.prisma,
      Array.from({ length: TOTAL }, (_, n) => ({
        type: 'fault.kafka.outage',
        destination: topic,
        orderingKey: `key-${n % KEYS}`,
        payload: { n },
        maxRetries: MAX_RETRIES,
      })),
    );
    run.ids = ids;
  }
  await broker.kill();

  for (const run of runs.values()) {
    const publisher = new KafkaPublisher(run.connection, { confirmTimeoutMs: 3000, producerRetries: 1 });
    suite.defer(() => publisher.close());
    const { relay, circuit } = startCircuitRelay(suite, run.database.db, publisher, {
      initialDelay: INITIAL_DELAY,
    });
    run.relay = relay;
    run.circuit = circuit;
  }
  // Without the circuit the first FAILED row ends the wait (and the case) early.
  for (const [client, run] of runs) {
    await waitFor(
      `the ${client} relay's circuit opened and failed its probes (or an event FAILED)`,
      async () => (run.circuit!().opened >= OPENINGS || (await failedCount(run)) > 0 ? true : undefined),
      { timeoutMs: 90_000 },
    );
  }
  for (const run of runs.values()) {
    const [during] = await run.database.db.query<{ failed: number; retried: number }>(
      `SELECT count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
         count(*) FILTER (WHERE retry_count > 0)::int AS retried FROM outbox_events`,
    );
    run.during = during;
  }
  await broker.start();
}, 180_000);

// Each step runs whatever the earlier ones did (a drop that fails must not leave the broker up).
afterAll(
  () =>
    cleanUp(
      [...[...runs.values()].map((run) => () => run.database.drop()), () => broker?.dispose()],
      BROKER_CLEANUP_MS,
    ),
  CLEANUP_HOOK_MS,
);

describe.each(CLIENTS)('broker-recovery: kafka-outage (%s client)', (client) => {
  it('spends no retry while the broker is down; everything is SENT after it returns', async () => {
    const { topic, database, connection, ids, relay, circuit, during } = runs.get(
      client,
    ) as Required<ClientRun>;

    const allSent = await settle(
      'every event SENT',
      async () => {
        const rows = await database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
        );
        return rows[0]!.n === TOTAL;
      },
      90_000,
    );
    await relay.close();

    // Every copy, in read order (a Set counted no repeat: review 34), with its key and emit order.
    const readBack: { id: string; key: string; seq: number }[] = [];
    const reader = connection.kafka.consumer({ groupId: `fault-kafka-outage-readback-${Date.now()}` });
    suite.defer(() => reader.disconnect());
    await reader.connect();
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const { n } = JSON.parse(message.value?.toString() ?? '{}') as { n: number };
        readBack.push({
          id: message.headers?.['x-ferry-message-id']?.toString() ?? '',
          key: message.key?.toString() ?? '',
          seq: n,
        });
      },
    });
    await settle(
      'every event read back',
      async () => new Set(readBack.map((r) => r.id)).size >= TOTAL,
      30_000,
    );
    // Copies still on their way would be missed otherwise: a moment more, then what is there.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await reader.disconnect();
    const orderViolations = keyOrderViolations(readBack);

    const [after] = await database.db.query<{ stuck: number; failed: number; retried: number }>(
      `SELECT count(*) FILTER (WHERE status <> 'SENT')::int AS stuck,
         count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
         count(*) FILTER (WHERE retry_count > 0)::int AS retried FROM outbox_events`,
    );
    process.stdout.write(
      `kafka-outage (${client}): circuit opened ${circuit().opened}x, closed ${circuit().closed}x; during the outage FAILED ` +
        `${during!.failed}, retried ${during!.retried}; after: FAILED ${after!.failed}, retried ${after!.retried}\n`,
    );
    assertLedger(`kafka-outage (${client})`, {
      ...emptyLedger(),
      offered: TOTAL,
      accepted: ids.length,
      ...reconcile(
        ids,
        readBack.map((r) => r.id),
      ),
      stuck: after!.stuck,
    });
    expect({
      allSent,
      during,
      failedAfter: after!.failed,
      closed: circuit().closed > 0,
      orderViolations,
    }).toEqual({
      orderViolations: [],
      allSent: true,
      during: { failed: 0, retried: 0 },
      failedAfter: 0,
      closed: true,
    });
  });
});
