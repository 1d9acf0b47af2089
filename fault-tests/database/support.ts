/**
 * What the database scenarios share: an application database on a private cluster, ferry's
 * migrations, a business table the handlers write in their transaction, the inbox under test and
 * the ledger read back from PostgreSQL.
 */
import pino from 'pino';
import {
  Inbox,
  fromPrisma,
  isFerryError,
  migrate,
  type InboxAcceptInput,
  type InboxHandlerContext,
  type InboxOptions,
} from '@ferry/core';
import type { PrismaClient } from '../../generated/prisma/client';
import { prismaFor } from '../../test-support/database';
import { emptyLedger, reconcile, type Ledger } from '../harness/ledger';
import type { PrivateCluster } from '../harness/privatePostgres';

export const APP_DATABASE = 'app';
export const CONSUMER = 'orders';
export const TENANT = 'acme';

export const quietLogger = pino({ level: 'silent' });

/**
 * Worker timings short enough for a test and inside ferry's bounds (heartbeat < lease / 2).
 * The lease is what recovers a claim abandoned by a crash, so it bounds the recovery time.
 */
export const WORKER = {
  enabled: false,
  concurrency: 4,
  pollIntervalMs: 20,
  leaseMs: 2_000,
  heartbeatIntervalMs: 200,
  transactionTimeoutMs: 5_000,
  transactionMaxWaitMs: 2_000,
  shutdownTimeoutMs: 3_000,
  maxAttempts: 50,
  retryBaseMs: 10,
  retryMaxMs: 200,
} as const;

/** The application's client on a private cluster: the shared test factory, pool 8, 2 s connect deadline. */
export function prismaOn(url: string, max = 8): PrismaClient {
  return prismaFor(url, { max, connectionTimeoutMillis: 2_000 });
}

/** Creates the application database, migrates it with ferry's migrator, adds the business table. */
export async function prepareAppDatabase(
  cluster: PrivateCluster,
  businessTablespace?: string,
): Promise<void> {
  await cluster.query(`CREATE DATABASE ${APP_DATABASE}`);
  const prisma = prismaOn(cluster.url(APP_DATABASE), 2);
  try {
    await migrate(fromPrisma(prisma));
    // No unique constraint on message_id on purpose: a message applied twice shows up as two rows.
    await prisma.$executeRawUnsafe(
      `CREATE TABLE business_effects (
         id bigserial PRIMARY KEY,
         message_id text NOT NULL,
         receipt_id uuid NOT NULL,
         attempt int NOT NULL,
         body text NOT NULL
       )${businessTablespace ? ` TABLESPACE ${businessTablespace}` : ''}`,
    );
  } finally {
    await prisma.$disconnect();
  }
}

/** The handler's business write, in the worker's transaction (`context.tx`). */
export async function writeBusinessRow(context: InboxHandlerContext, body = 'ok'): Promise<void> {
  await fromPrisma(context.tx).execute(
    'INSERT INTO business_effects (message_id, receipt_id, attempt, body) VALUES ($1, $2::uuid, $3, $4)',
    [context.messageId, context.receiptId, context.lifetimeAttempts, body],
  );
}

export function makeInbox(
  prisma: PrismaClient,
  handler: (payload: Readonly<Record<string, unknown>>, context: InboxHandlerContext) => Promise<void>,
  options: Omit<InboxOptions, 'handlers' | 'logger'> = {},
): Inbox {
  return new Inbox(prisma, {
    logger: quietLogger,
    ...options,
    handlers: { [CONSUMER]: handler },
    worker: { ...WORKER, ...options.worker },
  });
}

export function inputFor(messageId: string, n: number): InboxAcceptInput {
  return { consumer: CONSUMER, messageId, tenantId: TENANT, payload: { n } };
}

/**
 * A producer that behaves like a transport: it offers a batch with acceptMany, and only when the
 * whole batch was answered does it count those messages as acknowledged. A batch whose acceptance
 * failed (database down) is offered again, as a broker would redeliver unacknowledged messages.
 */
export class Producer {
  readonly offered: string[] = [];
  readonly acknowledged = new Set<string>();
  duplicatesAbsorbed = 0;
  failedAttempts = 0;
  private nextN = 0;

  constructor(
    /** The application instance it delivers to; a failover test points it at the new one. */
    public inbox: Inbox,
    private readonly prefix: string,
  ) {}

  /** Offers one batch until it is acknowledged; gives up only at the deadline. */
  async offerBatch(size: number, deadlineMs = 60_000): Promise<string[]> {
    const inputs = Array.from({ length: size }, () => {
      this.nextN += 1;
      return inputFor(`${this.prefix}-${this.nextN}`, this.nextN);
    });
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      this.offered.push(...inputs.map((input) => input.messageId));
      try {
        const results = await this.inbox.acceptMany(inputs);
        results.forEach((result, i) => {
          if (result.kind === 'accepted') this.acknowledged.add(inputs[i]!.messageId);
          else if (result.kind === 'duplicate') {
            this.acknowledged.add(inputs[i]!.messageId);
            this.duplicatesAbsorbed += 1;
          } else throw new Error(`unexpected acceptance result ${JSON.stringify(result)}`);
        });
        return inputs.map((input) => input.messageId);
      } catch (error) {
        if (!isFerryError(error) || !error.retriable || Date.now() > deadline) throw error;
        this.failedAttempts += 1;
        // A redelivery delay, as a broker would apply; not a wait for a condition.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

export interface ReceiptCounts {
  total: number;
  completed: number;
  unfinished: number;
  dead: number;
}

export async function receiptCounts(prisma: PrismaClient): Promise<ReceiptCounts> {
  const [row] = await prisma.$queryRawUnsafe<
    { total: number; completed: number; unfinished: number; dead: number }[]
  >(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed,
            count(*) FILTER (WHERE status IN ('PENDING', 'PROCESSING', 'RETRYABLE'))::int AS unfinished,
            count(*) FILTER (WHERE status = 'DEAD')::int AS dead
       FROM ferry_inbox_receipts`,
  );
  return row!;
}

export async function messageIdsIn(prisma: PrismaClient, table: 'receipts' | 'effects'): Promise<string[]> {
  const sql =
    table === 'receipts'
      ? 'SELECT message_id FROM ferry_inbox_receipts'
      : 'SELECT message_id FROM business_effects';
  const rows = await prisma.$queryRawUnsafe<{ message_id: string }[]>(sql);
  return rows.map((row) => row.message_id);
}

/** The ledger from what was offered and what PostgreSQL holds after recovery. */
export async function ledgerFrom(prisma: PrismaClient, producer: Producer): Promise<Ledger> {
  const receipts = await messageIdsIn(prisma, 'receipts');
  const effects = await messageIdsIn(prisma, 'effects');
  const counts = await receiptCounts(prisma);
  return {
    ...emptyLedger(),
    offered: producer.offered.length,
    accepted: new Set(receipts).size,
    duplicatesAbsorbed: producer.duplicatesAbsorbed,
    ...reconcile(producer.offered, effects),
    stuck: counts.unfinished,
  };
}

/**
 * A scenario's cleanup steps, for `cleanUp` (harness/scaffold.ts) in its afterAll: its inboxes,
 * its outbox side and its Prisma clients closed (a close after a crash may fail: ignored), then
 * its clusters destroyed; each step bounded and run whatever the earlier ones did (review 75).
 */
export function scenarioSteps(parts: {
  readonly inboxes: readonly (Inbox | undefined)[];
  readonly outbox: { closeAll(): Promise<void> };
  readonly clients: readonly (PrismaClient | undefined)[];
  readonly clusters: readonly (PrivateCluster | undefined)[];
}): (() => unknown)[] {
  return [
    ...parts.inboxes.map((inbox) => () => inbox?.close().catch(() => undefined)),
    () => parts.outbox.closeAll(),
    ...parts.clients.map((client) => () => client?.$disconnect().catch(() => undefined)),
    ...parts.clusters.map((cluster) => () => cluster?.destroy()),
  ];
}
