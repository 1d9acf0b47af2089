import { randomUUID } from 'node:crypto';
import {
  pgTransactions,
  type InboxAcceptInput,
  type InboxOptions,
  type TransactionAdapter,
} from '@ferry/core';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import type { TestDatabase } from '../../../test-support/database';
import { PRISMA_LABEL, benchDatabase, chunks, positiveInteger } from '../env';
import { CONSUMER, TENANT, countRows, openInbox, type Tx } from '../inbox';
import { payload } from '../outbox';
import { timed, type Sample, type Scenario, type ScenarioInstance } from '../runner';
import type { PrismaClient } from '../../../generated/prisma/client';

const CONCURRENCY = 4;
/**
 * Inbox workers of `worker-completions` (BENCH_WORKERS, default 1). With more than one, each
 * worker and its share of the baseline's lanes get their own Prisma client with a pool of 6, the
 * shape of the core's inbox throughput test (4 workers x concurrency 4).
 */
const WORKERS = positiveInteger('BENCH_WORKERS', 1);
const INSERT = 'INSERT INTO bench_rows (message_id, amount_cents) VALUES ($1, $2)';
const WORKER = { enabled: false, concurrency: CONCURRENCY, pollIntervalMs: 50 } as const;

/** One handler insert in the handler transaction `tx`. */
type Insert<TTx> = (tx: TTx, messageId: string, amountCents: unknown) => Promise<unknown>;

const prismaInsert: Insert<Tx> = (tx, id, amount) => tx.$executeRawUnsafe(INSERT, id, amount);
const pgInsert: Insert<PoolClient> = (client, id, amount) => client.query(INSERT, [id, amount]);

/** A fresh database with the handler's table, and `n` receipts accepted for each run. */
class WorkerBench {
  private constructor(
    readonly database: TestDatabase,
    private readonly accept: (inputs: readonly InboxAcceptInput[]) => Promise<unknown>,
    private readonly closeAcceptor: () => Promise<void>,
  ) {}

  static async open(): Promise<WorkerBench> {
    const database = await benchDatabase();
    await database.prisma.$executeRawUnsafe(
      'CREATE TABLE bench_rows (message_id text PRIMARY KEY, amount_cents integer NOT NULL)',
    );
    const acceptor = await openInbox(database.prisma);
    return new WorkerBench(
      database,
      (inputs) => acceptor.acceptMany(inputs),
      () => acceptor.close(),
    );
  }

  get prisma(): PrismaClient {
    return this.database.prisma;
  }

  /** Empties the table and the inbox, then accepts `n` receipts (not timed); their inputs. */
  async prepare(n: number, accept: boolean): Promise<InboxAcceptInput[]> {
    await this.prisma.$executeRawUnsafe('TRUNCATE bench_rows, ferry_inbox_receipts');
    const inputs = Array.from({ length: n }, (_, i) => ({
      consumer: CONSUMER,
      messageId: randomUUID(),
      tenantId: TENANT,
      payload: payload(i),
    }));
    if (accept) for (const batch of chunks(inputs, 500)) await this.accept(batch);
    return inputs;
  }

  /**
   * One inbox worker (concurrency 4, `start()`) per client runs a handler that inserts one row
   * per receipt, until all `n` are COMPLETED.
   */
  async drain<TTx>(
    clients: ReadonlyArray<PrismaClient | TransactionAdapter<TTx>>,
    insert: Insert<TTx>,
    n: number,
  ) {
    await this.prepare(n, true);
    let completed = 0;
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const options: InboxOptions<TTx> = {
      worker: WORKER,
      observer: (event) => {
        if (event.type === 'completed' && ++completed >= n) resolve();
      },
      handlers: {
        [CONSUMER]: async (message, context) =>
          void (await insert(context.tx, context.messageId, message.amountCents)),
      },
    };
    const inboxes = await Promise.all(clients.map((client) => openInbox<TTx>(client, options)));
    try {
      const sample = await timed(async () => {
        for (const inbox of inboxes) inbox.start();
        await done;
        return { ops: completed, verified: true };
      });
      return { ...sample, verified: await this.allDone(n) };
    } finally {
      await Promise.all(inboxes.map((inbox) => inbox.close()));
    }
  }

  async allDone(n: number): Promise<boolean> {
    const rows = await countRows(this.prisma, 'bench_rows');
    const finished = await countRows(this.prisma, 'ferry_inbox_receipts', "WHERE status = 'COMPLETED'");
    return rows === n && finished === n;
  }

  async close(): Promise<void> {
    await this.closeAcceptor();
    await this.database.drop();
  }
}

/**
 * Inbox worker completions. Before each run (not timed) `n` receipts are accepted. Subject:
 * WORKERS inbox workers (concurrency 4 each, started with `start()`) run a handler that inserts
 * one row per message, until all `n` are COMPLETED. Baseline: a plain loop with the same total
 * concurrency (4 lanes per worker, on the same clients) doing the same insert, each in its own
 * Prisma interactive transaction.
 */
export const workerCompletions: Scenario = {
  name: WORKERS === 1 ? 'worker-completions' : `worker-completions-x${WORKERS}`,
  unit: 'completions/s',
  better: 'higher',
  baselineLabel: `insert per message in its own transaction, concurrency ${CONCURRENCY * WORKERS}`,
  subjectLabel: `${WORKERS === 1 ? 'inbox worker' : `${WORKERS} inbox workers`} on ${PRISMA_LABEL}, concurrency ${CONCURRENCY}`,
  targets: [{ on: 'ratio', bound: 0.6 }], // issue 13: the worker at least 0.6 of the plain Prisma loop
  async open(): Promise<ScenarioInstance> {
    const bench = await WorkerBench.open();
    const clients =
      WORKERS === 1
        ? [bench.prisma]
        : Array.from({ length: WORKERS }, () => bench.database.newClient({ max: 6 }));
    return {
      async baseline(n): Promise<Sample> {
        const messages = await bench.prepare(n, false);
        const sample = await timed(async () => {
          let next = 0;
          const lane = async (client: PrismaClient) => {
            while (next < messages.length) {
              const message = messages[next++]!;
              await client.$transaction((tx) =>
                prismaInsert(tx, message.messageId, message.payload.amountCents),
              );
            }
          };
          const lanes = clients.flatMap((client) => Array.from({ length: CONCURRENCY }, () => lane(client)));
          await Promise.all(lanes);
          return { ops: n, verified: true };
        });
        return { ...sample, verified: (await countRows(bench.prisma, 'bench_rows')) === n };
      },
      subject: (n) => bench.drain(clients, prismaInsert, n),
      close: () => bench.close(),
    };
  },
};

/**
 * The same worker with its handler transactions on node-postgres (`pgTransactions(pool)`, a pool
 * of 10 as Prisma's; ferry's own statements on `fromPg` prepared statements) against the worker on
 * Prisma: the ratio is what the adapter changes.
 */
export const workerCompletionsPg: Scenario = {
  name: 'worker-completions-pg',
  unit: 'completions/s',
  better: 'higher',
  baselineLabel: `inbox worker on ${PRISMA_LABEL}, concurrency ${CONCURRENCY}`,
  subjectLabel: `inbox worker on pgTransactions(pool), concurrency ${CONCURRENCY}`,
  async open(): Promise<ScenarioInstance> {
    const bench = await WorkerBench.open();
    const pool = listened(new Pool({ connectionString: bench.database.url, max: 10 }));
    return {
      baseline: (n) => bench.drain([bench.prisma], prismaInsert, n),
      subject: (n) => bench.drain([pgTransactions(pool)], pgInsert, n),
      async close() {
        await pool.end();
        await bench.close();
      },
    };
  },
};
