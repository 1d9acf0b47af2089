import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import type { Consumer, KafkaMessage } from 'kafkajs';
import { FerryError, type InboxAcceptInput, type InboxAcceptResult, type InboxAcceptor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { payloadTooLarge } from '../../../test-support/pgAcceptor';
import {
  KafkaConnection,
  KafkaPublisher,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type ConnectionOptions,
  type KafkaInboxConsumer,
} from '../src';
import { kafkaClient } from './clients';
import { WaitTimeoutError, waitUntil } from '@ferry/testing';

export const silentLogger = pino({ level: 'silent' });

export interface CapturedLogger {
  readonly logger: pino.Logger;
  /** Every line at warn or above, parsed. */
  readonly lines: { readonly level: number; readonly msg: string; readonly detail?: string }[];
}

/** A pino logger that keeps its warn-and-above lines in memory, for tests that read the log. */
export function captureLogger(): CapturedLogger {
  const lines: { level: number; msg: string; detail?: string }[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

export function brokers(): string[] {
  return (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
}

/**
 * Connection options under which the client waits briefly between its retries, for tests that
 * wait for it to give up (a send to a topic the cluster does not have, a connect to unreachable
 * brokers): @platformatic/kafka waits 1 s between retries by default (so each give-up costs
 * seconds), kafkajs already retries within ~1.5 s. The client still makes every retry and
 * reports the same failure, only sooner.
 */
export function quickRetries(): Partial<ConnectionOptions> {
  return { kafkaConfig: quickRetryConfig() };
}

/** quickRetries()'s kafkaConfig, for a test that passes a kafkaConfig of its own. */
export function quickRetryConfig(): Readonly<Record<string, unknown>> {
  return kafkaClient() === 'platformatic' ? { retryDelay: 100 } : {};
}

export function testConnection(options: Partial<ConnectionOptions> = {}): KafkaConnection {
  return new KafkaConnection({
    brokers: brokers(),
    client: kafkaClient(),
    clientId: 'ferry-kafka-test',
    kafkaLogLevel: 'nothing',
    logger: silentLogger,
    ...options,
  });
}

/** A send held on its way to the client (WatchedSends.hold()). */
export interface HeldSend {
  /** Resolves once the held send was handed to a client producer. */
  readonly handed: Promise<void>;
  /**
   * Lets the held send go on to the client. Until then it is not sent, and it fails when its
   * client producer disconnects, as a send in flight does.
   */
  release(): void;
}

/** The sends that reach the client producers of `connection` (watchSends). */
export interface WatchedSends {
  readonly connection: KafkaConnection;
  /** The topics of each send handed to a client producer, in the order they were handed. */
  readonly sent: (readonly string[])[];
  /** How many sends handed to a client producer have not settled yet. */
  unsettled(): number;
  /** Holds the next send handed to a client producer (holds taken earlier come first). */
  hold(): HeldSend;
}

/**
 * A test connection whose client producers (below SequencedSends' queue: a send they are handed
 * goes to the broker) record each send and hold those asked for: the one place a test wraps the
 * driver's producers.
 */
export function watchSends(options: Partial<ConnectionOptions> = {}): WatchedSends {
  const connection = testConnection(options);
  const sent: string[][] = [];
  let unsettled = 0;
  const holds: { handed: () => void; released: Promise<void> }[] = [];
  const makeProducer = connection.driver.clientProducer.bind(connection.driver);
  jest.spyOn(connection.driver, 'clientProducer').mockImplementation((producerOptions) => {
    const real = makeProducer(producerOptions);
    const disconnected = new AbortController();
    const dropped = new Promise<never>((_, reject) =>
      disconnected.signal.addEventListener('abort', () => reject(disconnected.signal.reason as Error)),
    );
    dropped.catch(() => undefined);
    return {
      connect: () => real.connect(),
      disconnect: () => {
        disconnected.abort(new Error('producer disconnected'));
        return real.disconnect();
      },
      destroy: () => real.destroy(),
      onDisconnect: (listener) => real.onDisconnect(listener),
      send: async (batches) => {
        sent.push(batches.map((batch) => batch.topic));
        unsettled += 1;
        try {
          const held = holds.shift();
          if (held) {
            held.handed();
            await Promise.race([held.released, dropped]);
          }
          await real.send(batches);
        } finally {
          unsettled -= 1;
        }
      },
    };
  });
  const hold = (): HeldSend => {
    let handed!: () => void;
    let release!: () => void;
    const handedPromise = new Promise<void>((resolve) => (handed = resolve));
    holds.push({ handed, released: new Promise<void>((resolve) => (release = resolve)) });
    return { handed: handedPromise, release };
  };
  return { connection, sent, unsettled: () => unsettled, hold };
}

/**
 * What the tests against the real inbox share: a migrated database, a topic of `partitions`
 * partitions with its `.dlq`, a publisher to it and the consumer a test attaches (`attached`),
 * set up in beforeAll and removed in afterAll (consumer closed, group and topics deleted).
 */
export class InboxTopic {
  readonly connection = testConnection();
  readonly topic: string;
  readonly groupId: string;
  database!: TestDatabase;
  publisher!: KafkaPublisher;
  /** The consumer the test attached, closed in afterAll. */
  attached: KafkaInboxConsumer | null = null;

  constructor(prefix: string, partitions: number) {
    this.topic = uniqueName(prefix);
    this.groupId = uniqueName(`${prefix}-group`);
    beforeAll(async () => {
      this.database = await createTestDatabase();
      await ensureTopics(this.connection, [
        { topic: this.topic, partitions },
        { topic: `${this.topic}.dlq` },
      ]);
      this.publisher = new KafkaPublisher(this.connection, { defaultDestination: this.topic });
    });
    afterAll(async () => {
      await this.attached?.close();
      await this.publisher.close();
      await deleteGroups(this.connection, [this.groupId]);
      await deleteTopics(this.connection, [this.topic, `${this.topic}.dlq`]);
      await this.database.drop();
    });
  }
}

/** A name unique to this run, for topics and groups. */
export function uniqueName(prefix: string): string {
  return `ferry-test-${prefix}-${randomBytes(5).toString('hex')}`;
}

/** Consumer settings that make group joins and rebalances quick on a single node. */
export const fastGroup = {
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 300,
  rebalanceTimeoutMs: 10_000,
} as const;

/** Waits for `condition` to hold; the message names `describe()` (the one wait-until of @ferry/testing). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  describe: () => string,
  deadlineMs = 40_000,
): Promise<void> {
  try {
    await waitUntil('condition', condition, { timeoutMs: deadlineMs, intervalMs: 50 });
  } catch (error) {
    if (!(error instanceof WaitTimeoutError)) throw error;
    throw new Error(`condition not met within ${deadlineMs} ms: ${describe()}`);
  }
}

export { testOutboxMessage as outboxMessage } from '../../../test-support/outboxMessages';

export interface ReadRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: Record<string, string>;
  /** Every value of each header, in order (a name may repeat). */
  readonly headerValues: Record<string, string[]>;
}

function decode(partition: number, message: KafkaMessage): ReadRecord {
  const headers: Record<string, string> = {};
  const headerValues: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headerValues[name] = (Array.isArray(value) ? value : [value]).map(String);
    headers[name] = headerValues[name][0]!;
  }
  return {
    partition,
    offset: message.offset,
    key: message.key?.toString('utf8') ?? null,
    value: message.value?.toString('utf8') ?? null,
    headers,
    headerValues,
  };
}

/** Reads `topic` from the beginning with an independent group until `count` records arrived. */
export async function readBack(
  connection: KafkaConnection,
  topic: string,
  count: number,
): Promise<ReadRecord[]> {
  const records: ReadRecord[] = [];
  const consumer: Consumer = connection.kafka.consumer({
    groupId: uniqueName('reader'),
    sessionTimeout: 6_000,
    heartbeatInterval: 300,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        records.push(decode(partition, message));
      },
    });
    await waitFor(
      () => records.length >= count,
      () => `read ${records.length} of ${count} records from ${topic}`,
    );
    return records;
  } finally {
    await consumer.disconnect();
  }
}

/** Committed offsets of `groupId` on `topic`, by partition ('-1' when none). */
export async function committedOffsets(
  connection: KafkaConnection,
  groupId: string,
  topic: string,
): Promise<Map<number, string>> {
  const admin = connection.kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
  } finally {
    await admin.disconnect();
  }
}

/** True once `groupId` committed every partition of `topic` up to its end offset. */
export async function fullyCommitted(
  connection: KafkaConnection,
  groupId: string,
  topic: string,
): Promise<boolean> {
  const [committed, end] = await Promise.all([
    committedOffsets(connection, groupId, topic),
    endOffsets(connection, topic),
  ]);
  return [...end].every(([partition, high]) => committed.get(partition) === high);
}

/**
 * Records of `topic` that `groupId` has not committed past: per partition, the end offset less the
 * committed one (the partition's first offset where the group committed none).
 */
export async function groupLag(connection: KafkaConnection, groupId: string, topic: string): Promise<number> {
  const admin = connection.kafka.admin();
  await admin.connect();
  try {
    const [[entry], offsets] = await Promise.all([
      admin.fetchOffsets({ groupId, topics: [topic] }),
      admin.fetchTopicOffsets(topic),
    ]);
    const committed = new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
    return offsets.reduce((lag, { partition, low, high }) => {
      const from = committed.get(partition) ?? '-1';
      return lag + Number(BigInt(high) - BigInt(from === '-1' ? low : from));
    }, 0);
  } finally {
    await admin.disconnect();
  }
}

/** Waits until `groupId` committed every partition of `topic` up to its end offset. */
export async function waitFullyCommitted(
  connection: KafkaConnection,
  groupId: string,
  topic: string,
  deadlineMs?: number,
): Promise<void> {
  await waitFor(
    () => fullyCommitted(connection, groupId, topic),
    () => `group ${groupId} did not commit ${topic} to its end offsets`,
    deadlineMs,
  );
}

/** End (high-water) offsets of `topic`, by partition. */
export async function endOffsets(connection: KafkaConnection, topic: string): Promise<Map<number, string>> {
  const admin = connection.kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((p) => [p.partition, p.high]));
  } finally {
    await admin.disconnect();
  }
}

export interface AcceptedRow {
  readonly consumer: string;
  readonly messageId: string;
  readonly tenantId: string | null;
  readonly payload: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/**
 * A small inbox acceptor over a real PostgreSQL table: unique (consumer, message_id),
 * INSERT ... ON CONFLICT DO NOTHING in one transaction, committed before it resolves.
 * `refuse` makes it throw a retriable FerryError as a database that refuses work would. Like
 * ferry's inbox, it reports data PostgreSQL rejects (SQLSTATE classes 22 and 23, e.g. NUL in
 * jsonb) as the non-retriable FERRY_VALIDATION_FAILED, and everything else as retriable
 * FERRY_DATABASE_UNAVAILABLE. `failWhen` makes any batch holding a matching input throw a plain
 * Error, as an acceptor bug would.
 */
export class PgTestAcceptor implements InboxAcceptor {
  readonly maxPayloadBytes = 64 * 1024;
  refuse = false;
  failWhen: ((input: InboxAcceptInput) => boolean) | null = null;
  calls = 0;
  refusals = 0;
  duplicates = 0;
  /** Runs after a batch committed and before acceptMany resolves (e.g. to crash mid-batch). */
  afterCommit: (() => Promise<void>) | null = null;

  private constructor(
    private readonly database: TestDatabase,
    private readonly pool: Pool,
  ) {}

  static async create(): Promise<PgTestAcceptor> {
    const database = await createTestDatabase({ migrate: false });
    const pool = listened(new Pool({ connectionString: database.url, max: 4 }));
    await pool.query(`CREATE TABLE received (
      seq bigserial PRIMARY KEY,
      consumer text NOT NULL,
      message_id text NOT NULL,
      tenant_id text,
      type text,
      payload jsonb NOT NULL,
      headers jsonb,
      UNIQUE (consumer, message_id)
    )`);
    return new PgTestAcceptor(database, pool);
  }

  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    this.calls += 1;
    if (this.refuse) {
      this.refusals += 1;
      throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'test database refuses work', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:1'),
      });
    }
    const poisoned = this.failWhen === null ? undefined : inputs.find(this.failWhen);
    if (poisoned !== undefined) throw new Error(`test acceptor cannot take ${poisoned.messageId}`);
    const client = await this.pool.connect();
    const results: InboxAcceptResult[] = [];
    try {
      await client.query('BEGIN');
      for (const input of inputs) {
        const tooLarge = payloadTooLarge(input, this.maxPayloadBytes);
        if (tooLarge !== null) {
          results.push(tooLarge);
          continue;
        }
        const inserted = await client.query<{ seq: string }>(
          `INSERT INTO received (consumer, message_id, tenant_id, type, payload, headers)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (consumer, message_id) DO NOTHING RETURNING seq`,
          [
            input.consumer,
            input.messageId,
            input.tenantId,
            input.type ?? null,
            JSON.stringify(input.payload),
            input.headers === undefined ? null : JSON.stringify(input.headers),
          ],
        );
        const seq = inserted.rows[0]?.seq;
        if (seq === undefined) this.duplicates += 1;
        results.push(
          seq === undefined ? { kind: 'duplicate', id: input.messageId } : { kind: 'accepted', id: seq },
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      const sqlState = (error as { code?: unknown }).code;
      if (typeof sqlState === 'string' && /^2[23]/.test(sqlState)) {
        const reason = `PostgreSQL refused the data: ${(error as Error).message} (${sqlState})`;
        throw new FerryError('FERRY_VALIDATION_FAILED', reason, { cause: error });
      }
      throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'test acceptance failed', { cause: error });
    } finally {
      client.release();
    }
    if (this.afterCommit) await this.afterCommit();
    return results;
  }

  /** Every accepted row, in acceptance order. */
  async rows(consumer: string): Promise<AcceptedRow[]> {
    const result = await this.pool.query<{
      consumer: string;
      message_id: string;
      tenant_id: string | null;
      payload: Record<string, unknown>;
      headers: Record<string, string> | null;
    }>(
      'SELECT consumer, message_id, tenant_id, payload, headers FROM received WHERE consumer = $1 ORDER BY seq',
      [consumer],
    );
    return result.rows.map((row) => ({
      consumer: row.consumer,
      messageId: row.message_id,
      tenantId: row.tenant_id,
      payload: row.payload,
      headers: row.headers ?? {},
    }));
  }

  async count(consumer: string): Promise<number> {
    const result = await this.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM received WHERE consumer = $1',
      [consumer],
    );
    return Number(result.rows[0]?.n ?? 0);
  }

  async drop(): Promise<void> {
    await this.pool.end();
    await this.database.drop();
  }
}
