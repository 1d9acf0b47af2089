import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ConsumeMessage } from 'amqplib';
import {
  FERRY_HEADERS,
  INBOX_CHANNEL,
  OUTBOX_DEFAULT_CHANNEL,
  createRelay,
  emit,
  fromPg,
  fromPrisma,
  pgTransactions,
  type ApplicationTransaction,
  type InboxAcceptor,
  type SqlExecutor,
  type TransactionAdapter,
} from '@ferry/core';
import { outboxHeaders } from '@ferry/core/transport';
import { KafkaConnection, KafkaPublisher, deleteTopics, ensureTopics } from '@ferry/kafka';
import {
  DEFAULTS as RABBIT_DEFAULTS,
  RabbitConnection,
  attachRabbitConsumer,
  declareWorkQueue,
  deleteWorkQueue,
} from '@ferry/rabbitmq';
import { Client, Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import type { TestDatabase } from '../../../test-support/database';
import { PRISMA_LABEL, SERVICES, benchDatabase, positiveInteger, uniqueName } from '../env';
import { CONSUMER, TENANT, openInbox } from '../inbox';
import { KafkaReader } from '../kafkaReader';
import { EVENT_TYPE, EXECUTOR, outboxMessages, payload } from '../outbox';
import { median, quantile, type Sample, type Scenario } from '../runner';
import type { PrismaClient } from '../../../generated/prisma/client';

/** Mean gap between messages; each gap is drawn from 0..2x this, so sends do not phase-lock with polls. */
const MEAN_GAP_MS = 20;
/** After the last record, how long the run waits for a duplicate before counting. */
const SETTLE_MS = 300;
/** BENCH_E2E_HOPS=1 adds each hop's median (ms after the RabbitMQ publish) to the samples' extras. */
const HOPS = process.env.BENCH_E2E_HOPS === '1';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** When each probe passed each hop (`performance.now()`), for the per-hop breakdown. */
class Hops {
  private readonly marks = new Map<string, Record<string, number>>();
  /** The probe in flight (one at a time), for hops that do not carry its id. */
  current: string | undefined;

  mark(probe: string | undefined, hop: string): void {
    if (probe === undefined) return;
    const marks = this.marks.get(probe) ?? {};
    marks[hop] ??= performance.now();
    this.marks.set(probe, marks);
  }

  /** Median ms from `start` to each hop, over `probes`. */
  medians(probes: readonly string[], start: string): Record<string, number> {
    const names = new Set(probes.flatMap((probe) => Object.keys(this.marks.get(probe) ?? {})));
    names.delete(start);
    const out: Record<string, number> = {};
    for (const name of names) {
      const deltas = probes.map((probe) => {
        const marks = this.marks.get(probe);
        return (marks?.[name] ?? Number.NaN) - (marks?.[start] ?? Number.NaN);
      });
      out[`at.${name}`] = median(deltas.filter(Number.isFinite));
    }
    return out;
  }

  clear(): void {
    this.marks.clear();
  }
}

/**
 * With BENCH_E2E_HOPS=1, a LISTEN connection of the bench's own on the inbox's and the relay's
 * wake-up channels, so the breakdown shows when each NOTIFY reached a listener.
 */
async function listenForHops(url: string, hops: Hops): Promise<Client> {
  const client = listened(new Client({ connectionString: url }));
  await client.connect();
  client.on('notification', (message) => hops.mark(hops.current, `notified.${message.channel}`));
  await client.query(`LISTEN ${INBOX_CHANNEL}`);
  await client.query(`LISTEN ${OUTBOX_DEFAULT_CHANNEL}`);
  return client;
}

/** What both sides share: the database, the brokers, the Kafka reader and the publishing channel. */
interface Rig {
  readonly database: TestDatabase;
  readonly topic: string;
  readonly kafka: KafkaConnection;
  readonly rabbit: RabbitConnection;
  readonly channel: Channel;
  readonly reader: KafkaReader;
  readonly hops: Hops;
}

/** The RabbitMQ message of probe `id` (the body carries the id to the Kafka reader). */
function send(rig: Rig, queue: string, id: string, i: number): void {
  rig.channel.sendToQueue(queue, Buffer.from(JSON.stringify({ ...payload(i), probe: id })), {
    persistent: true,
    contentType: 'application/json',
    messageId: id,
    headers: { [FERRY_HEADERS.tenantId]: TENANT, [FERRY_HEADERS.eventType]: EVENT_TYPE },
  });
}

/**
 * One untimed message through the chain, then `n` probes one at a time: publish to `queue`, wait
 * until the Kafka reader got it, a random gap, the next. The sample is the p50 in ms (p99 in
 * extra); verified when every probe was read exactly once, `SETTLE_MS` after the last.
 */
async function measure(rig: Rig, queue: string, n: number): Promise<Sample> {
  const prime = randomUUID();
  const primed = rig.reader.arrival(prime, 60_000);
  send(rig, queue, prime, 0);
  await primed;
  rig.hops.clear();
  const probes: string[] = [];
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < n; i += 1) {
    const id = randomUUID();
    probes.push(id);
    const arrived = rig.reader.arrival(id);
    rig.hops.current = id;
    rig.hops.mark(id, 'published');
    const at = performance.now();
    send(rig, queue, id, i);
    latencies.push((await arrived) - at);
    rig.hops.mark(id, 'read');
    await sleep(Math.random() * 2 * MEAN_GAP_MS);
  }
  const elapsedMs = performance.now() - started;
  await sleep(SETTLE_MS);
  return {
    value: quantile(latencies, 0.5),
    ops: latencies.length,
    elapsedMs,
    verified: probes.every((id) => rig.reader.count(id) === 1),
    extra: { p99: quantile(latencies, 0.99), ...(HOPS ? rig.hops.medians(probes, 'published') : {}) },
  };
}

/** The clients ferry's side runs on: the test database's Prisma client, or node-postgres (BENCH_EXECUTOR=pg). */
interface Clients<TTx> {
  readonly transactions: PrismaClient | TransactionAdapter<TTx>;
  readonly db: SqlExecutor;
}

/**
 * Ferry's side of one run: attachRabbitConsumer into an Inbox whose worker LISTENs for
 * acceptance (`worker.listenUrl`), a handler that emits the message on in its transaction, a
 * relay with LISTEN/NOTIFY wake-up (`listenUrl`) and KafkaPublisher. Everything else default.
 */
async function subject<TTx extends ApplicationTransaction>(
  rig: Rig,
  clients: Clients<TTx>,
  publisher: KafkaPublisher,
  queue: string,
  n: number,
): Promise<Sample> {
  const { database, topic, hops } = rig;
  await database.prisma.$executeRawUnsafe('TRUNCATE ferry_inbox_receipts, outbox_events');
  const receiptProbe = new Map<string, string>();
  const eventProbe = new Map<string, string>();
  const inbox = await openInbox<TTx>(clients.transactions, {
    worker: { listenUrl: database.url },
    observer: (event) => {
      if (event.type === 'completed') hops.mark(receiptProbe.get(event.receiptId), 'committed');
    },
    handlers: {
      [CONSUMER]: async (body, context) => {
        hops.mark(context.messageId, 'handler');
        receiptProbe.set(context.receiptId, context.messageId);
        const { id } = await emit(context.tx, { type: EVENT_TYPE, payload: body, destination: topic });
        eventProbe.set(id, context.messageId);
        hops.mark(context.messageId, 'emitted');
      },
    },
  });
  const acceptor: InboxAcceptor = {
    maxPayloadBytes: inbox.maxPayloadBytes,
    async acceptMany(inputs) {
      for (const input of inputs) hops.mark(input.messageId, 'delivered');
      const results = await inbox.acceptMany(inputs);
      for (const input of inputs) hops.mark(input.messageId, 'accepted');
      return results;
    },
  };
  inbox.start();
  const consumer = attachRabbitConsumer(acceptor, {
    connection: rig.rabbit,
    queue,
    consumer: CONSUMER,
    declareTopology: false,
  });
  const relay = createRelay({
    db: clients.db,
    publisher,
    listenUrl: database.url,
    observer: (event) => {
      if (event.type === 'claimed') for (const id of event.ids) hops.mark(eventProbe.get(id), 'claimed');
      if (event.type === 'sent') hops.mark(eventProbe.get(event.id), 'sent');
    },
  });
  relay.start();
  const notifications = HOPS ? await listenForHops(database.url, hops) : undefined;
  try {
    const deadline = Date.now() + 10_000;
    while (relay.listener?.connected !== true && Date.now() < deadline) await sleep(10);
    return await measure(rig, queue, n);
  } finally {
    await notifications?.end();
    await relay.close();
    await consumer.close();
    await inbox.close();
  }
}

/** The same hops without ferry or PostgreSQL: amqplib consume → kafkajs idempotent send (acks -1) → ack. */
async function baseline(rig: Rig, queue: string, n: number): Promise<Sample> {
  const { topic, hops } = rig;
  const producer = rig.kafka.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const headers = outboxHeaders(outboxMessages(1, topic)[0]!);
  // Its own connection, as attachRabbitConsumer's: acks written on the publishing connection
  // would hold the next publish behind Nagle's algorithm and the broker's delayed ACK (~25 ms).
  const connection = await amqp.connect(SERVICES.amqpUrl);
  const channel = await connection.createChannel();
  await channel.prefetch(RABBIT_DEFAULTS.prefetch);
  const failures: unknown[] = [];
  const onMessage = async (message: ConsumeMessage) => {
    hops.mark(hops.current, 'delivered');
    const body = JSON.parse(message.content.toString('utf8')) as Record<string, unknown>;
    await producer.send({
      topic,
      acks: -1,
      messages: [{ key: null, value: Buffer.from(JSON.stringify(body), 'utf8'), headers }],
    });
    hops.mark(hops.current, 'confirmed');
    channel.ack(message);
  };
  await channel.consume(queue, (message) => {
    if (message !== null) onMessage(message).catch((error: unknown) => failures.push(error));
  });
  try {
    const sample = await measure(rig, queue, n);
    return { ...sample, verified: sample.verified && failures.length === 0 };
  } finally {
    await connection.close();
    await producer.disconnect();
  }
}

/**
 * Single-message end-to-end latency through real brokers (issue 13): RabbitMQ publish → Kafka
 * record read, one message at a time. Subject: ferry's inbox → handler → outbox → relay chain
 * with both wake-ups on. Baseline: amqplib consume → kafkajs idempotent send, no PostgreSQL.
 */
export const e2eLatencyBrokers: Scenario = {
  name: 'e2e-latency-brokers',
  unit: 'ms p50',
  better: 'lower',
  baselineLabel: 'amqplib consume → kafkajs idempotent send (acks -1)',
  subjectLabel: `RabbitMQ → Inbox → handler emit → relay → KafkaPublisher (wake-ups on, ${EXECUTOR === 'pg' ? 'node-postgres' : PRISMA_LABEL})`,
  n: (runN) => Math.min(runN, positiveInteger('BENCH_LATENCY_N', 100)),
  // Issue 13: single-message end-to-end p50 under 15 ms through RabbitMQ and Kafka.
  targets: [{ on: 'subject', bound: 15 }],
  async open() {
    const database = await benchDatabase();
    const topic = uniqueName('e2e');
    const queues = { subject: uniqueName('e2e-ferry'), baseline: uniqueName('e2e-raw') };
    const kafka = new KafkaConnection({
      brokers: [...SERVICES.kafkaBrokers],
      clientId: 'ferry-bench',
      kafkaLogLevel: 'nothing',
    });
    const rabbit = new RabbitConnection({ url: SERVICES.amqpUrl, connectionName: 'ferry-bench' });
    const connection = await amqp.connect(SERVICES.amqpUrl);
    const admin = await connection.createConfirmChannel();
    const hops = new Hops();
    const publisher = new KafkaPublisher(kafka, {
      observer: (event) => {
        if (event.type === 'published') hops.mark(hops.current, 'confirmed');
      },
    });
    let reader: KafkaReader | undefined;
    let channel: Channel | undefined;
    const pool =
      EXECUTOR === 'pg' ? listened(new Pool({ connectionString: database.url, max: 10 })) : undefined;
    const close = async () => {
      await Promise.allSettled([reader?.close(), publisher.close(), rabbit.close(), pool?.end()]);
      for (const queue of Object.values(queues))
        await deleteWorkQueue(admin, { queue }).catch(() => undefined);
      await connection.close();
      await deleteTopics(kafka, [topic]).catch(() => undefined);
      await database.drop();
    };
    try {
      for (const queue of Object.values(queues)) await declareWorkQueue(admin, { queue });
      await ensureTopics(kafka, [{ topic, partitions: 1 }]);
      await publisher.connect();
      reader = await KafkaReader.open(kafka, topic);
      channel = await connection.createChannel();
    } catch (error) {
      await close();
      throw error;
    }
    const rig: Rig = {
      database,
      topic,
      kafka,
      rabbit,
      channel,
      reader,
      hops,
    };
    return {
      baseline: (n) => baseline(rig, queues.baseline, n),
      subject: (n) =>
        pool
          ? subject(
              rig,
              { transactions: pgTransactions(pool), db: fromPg(pool) },
              publisher,
              queues.subject,
              n,
            )
          : subject(
              rig,
              { transactions: database.prisma, db: fromPrisma(database.prisma) },
              publisher,
              queues.subject,
              n,
            ),
      close,
    };
  },
};
