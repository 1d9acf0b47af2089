/**
 * The Node peer pg-transactional-outbox (0.5.x) as a relay: its outbox table and polling
 * function created by its own DatabaseSetup, messages stored by its own initializeMessageStorage,
 * and its polling listener calling a publish function until every message is processed.
 *
 * Polling, not logical replication: replication needs `wal_level = logical`, a server setting
 * that only takes effect after a restart of the shared PostgreSQL, which the benchmarks never do.
 */
import { randomUUID } from 'node:crypto';
import { Client, type ClientConfig } from 'pg';
import { listened } from '../../test-support/oneStatement';
import {
  DatabaseSetup,
  getDisabledLogger,
  initializeMessageStorage,
  initializePollingMessageListener,
  type PollingListenerConfig,
  type TransactionalLogger,
  type TransactionalMessage,
} from 'pg-transactional-outbox';
import { positiveInteger } from './env';
import { EVENT_TYPE, payload, waitUntil } from './outbox';

const SCHEMA = 'peer';
const TABLE = 'outbox';
const FUNCTION = 'next_outbox_messages';

/**
 * Messages the peer's polling listener works on at once (its `nextMessagesBatchSize`: each
 * runs in its own transaction on the handler pool, which has node-postgres's default 10
 * connections, as ferry's side has).
 */
export const PEER_BATCH = positiveInteger('BENCH_PEER_BATCH', 40);

/** The i-th benchmark event as the peer stores it: the same type and payload as ferry's. */
function peerMessage(i: number): TransactionalMessage {
  return {
    id: randomUUID(),
    aggregateType: 'order',
    aggregateId: `order-${i}`,
    messageType: EVENT_TYPE,
    // Unordered, as ferry's events without an ordering key: the peer's polling function
    // returns only the oldest 'sequential' message per segment.
    concurrency: 'parallel',
    payload: payload(i),
  };
}

/** A silent logger that remembers the first error (a message given up, or a failed poll). */
function errorLogger(): { logger: TransactionalLogger; error: () => string | undefined } {
  let error: string | undefined;
  const logger: TransactionalLogger = {
    ...getDisabledLogger(),
    error: (obj: unknown, msg?: string) =>
      void (error ??= `${msg ?? ''} ${obj instanceof Error ? obj.message : ''}`.trim()),
  };
  return { logger, error: () => error };
}

/** What one drain of the peer did. */
export interface PeerDrain {
  readonly published: number;
  /**
   * Attempts beyond the first (from the peer's started_attempts): a message that failed (e.g.
   * its row lock was held by a concurrent poll) is retried once its lock expires
   * (nextMessagesLockInMs, 5 s by default).
   */
  readonly retries: number;
  /**
   * Milliseconds from the start until `published - retries` messages were published: the
   * first pass over the backlog, before the retried messages' lock wait.
   */
  readonly firstPassMs: number;
}

export class PgTransactionalOutboxPeer {
  private constructor(
    private readonly connection: ClientConfig,
    private readonly admin: Client,
  ) {}

  /** Creates the peer's schema, outbox table, polling function and indexes in `url`'s database. */
  static async open(url: string): Promise<PgTransactionalOutboxPeer> {
    const admin = listened(new Client({ connectionString: url }));
    await admin.connect();
    const setup = {
      outboxOrInbox: 'outbox' as const,
      database: new URL(url).pathname.slice(1),
      schema: SCHEMA,
      table: TABLE,
      listenerRole: 'postgres',
      nextMessagesName: FUNCTION,
    };
    try {
      // Its index statements name indexes without a schema: keep them in the peer's.
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}; SET search_path TO ${SCHEMA}`);
      await admin.query(DatabaseSetup.dropAndCreateTable(setup));
      await admin.query(DatabaseSetup.createPollingFunction(setup));
      await admin.query(DatabaseSetup.setupPollingIndexes(setup));
    } catch (error) {
      await admin.end();
      throw error;
    }
    return new PgTransactionalOutboxPeer({ connectionString: url }, admin);
  }

  private config(): PollingListenerConfig {
    return {
      outboxOrInbox: 'outbox',
      dbListenerConfig: this.connection,
      settings: {
        dbSchema: SCHEMA,
        dbTable: TABLE,
        nextMessagesFunctionSchema: SCHEMA,
        nextMessagesFunctionName: FUNCTION,
        nextMessagesBatchSize: PEER_BATCH,
        enableMaxAttemptsProtection: false,
        enablePoisonousMessageProtection: false,
        messageCleanupIntervalInMs: 0,
      },
    };
  }

  /** Empties the peer's outbox, then stores `n` messages in one transaction; not timed. */
  async backlog(n: number): Promise<void> {
    await this.admin.query(`TRUNCATE ${SCHEMA}.${TABLE}`);
    const store = initializeMessageStorage(this.config(), getDisabledLogger());
    await this.admin.query('BEGIN');
    try {
      for (let i = 0; i < n; i += 1) await store(peerMessage(i), this.admin);
      await this.admin.query('COMMIT');
    } catch (error) {
      await this.admin.query('ROLLBACK');
      throw error;
    }
  }

  /**
   * Runs the polling listener with `publish` as its message handler until it published `n`
   * messages and all `n` rows are marked processed, then shuts it down. The listener's batch
   * size strategy is a constant PEER_BATCH: its default starts with batches of one for the first
   * PEER_BATCH polls (a startup guard against poisonous messages that a long-running
   * application pays once, not per backlog). Throws if the peer logged an error; a message
   * that failed and will be retried is only a warning, counted in `retries`.
   */
  async drain(
    n: number,
    publish: (message: TransactionalMessage) => Promise<void>,
    deadlineMs = 600_000,
  ): Promise<PeerDrain> {
    const started = performance.now();
    const publishedAt: number[] = [];
    const { logger, error } = errorLogger();
    const [shutdown] = initializePollingMessageListener(
      this.config(),
      {
        handle: async (message) => {
          await publish(message);
          publishedAt.push(performance.now() - started);
        },
      },
      logger,
      { batchSizeStrategy: () => Promise.resolve(PEER_BATCH) },
    );
    try {
      await waitUntil(() => publishedAt.length >= n || error() !== undefined, deadlineMs);
      // The last transactions commit just after their publish returned.
      await waitUntil(async () => error() !== undefined || (await this.allProcessed(n)), deadlineMs, 5);
    } finally {
      await shutdown();
    }
    const reported = error();
    if (reported !== undefined) throw new Error(`pg-transactional-outbox reported: ${reported}`);
    const { rows } = await this.admin.query<{ retries: number }>(
      `SELECT coalesce(sum(started_attempts - 1), 0)::int AS retries FROM ${SCHEMA}.${TABLE}`,
    );
    const retries = rows[0]?.retries ?? 0;
    const firstPass = Math.max(1, publishedAt.length - retries);
    return { published: publishedAt.length, retries, firstPassMs: publishedAt[firstPass - 1] ?? 0 };
  }

  /** True when all `n` rows are processed, none abandoned, and none else is left. */
  async allProcessed(n: number): Promise<boolean> {
    const { rows } = await this.admin.query<{ processed: number; total: number }>(
      `SELECT count(*) FILTER (WHERE processed_at IS NOT NULL AND abandoned_at IS NULL)::int AS processed,
              count(*)::int AS total
         FROM ${SCHEMA}.${TABLE}`,
    );
    return rows[0]?.processed === n && rows[0].total === n;
  }

  async close(): Promise<void> {
    await this.admin.end();
  }
}
