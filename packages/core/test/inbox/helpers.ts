import {
  fromPg,
  fromPrisma,
  Inbox,
  InboxAdmin,
  InboxPermanentError,
  type InboxRecord,
  type InboxEvent,
  type InboxHandlerContext,
  type InboxOptions,
  type PrismaClientLike,
  type PrismaTransactionLike,
  type TransactionAdapter,
  pgTransactions,
} from '@ferry/core';
import type { InboxInternals } from '@ferry/core';
import { randomUUID } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import pino from 'pino';
import type { TestDatabase } from '../../../../test-support/database';
import { waitUntil } from '@ferry/testing';
import { claimReceipts } from '../../src/inbox/sql/claim';
import type { ClaimedReceipt } from '../../src/inbox/types';
import { resolveInboxOptions } from '../../src/inbox/options';
import type { ProcessDeps } from '../../src/inbox/process';
import { sqlWorkerOps } from '../../src/inbox/workerOps';
import { SessionOutage } from '../../src/inbox/sessionOutage';
import { prismaTransactions } from '../../src/sql/executor';

export const quietLogger = pino({ level: 'silent' });

/** Short timings that respect the bounds (heartbeat < lease / 2). */
export const FAST_WORKER = {
  pollIntervalMs: 20,
  leaseMs: 2_000,
  heartbeatIntervalMs: 200,
  transactionTimeoutMs: 5_000,
  shutdownTimeoutMs: 2_000,
  retryBaseMs: 1,
  retryMaxMs: 1,
} as const;

/**
 * Inboxes made by makeInbox: those made inside a test are closed after it, those made in
 * beforeAll after the file, also when a test failed half-way (close() is safe twice).
 */
type Closable = Pick<Inbox, 'close'>;
const openedInTest: Closable[] = [];
const openedForFile: Closable[] = [];
const closeAll = async (inboxes: Closable[]): Promise<void> => {
  await Promise.allSettled(inboxes.splice(0).map((inbox) => inbox.close()));
};
afterEach(() => closeAll(openedInTest));
afterAll(() => closeAll(openedForFile));

export function makeInbox<TTx>(
  client: TransactionAdapter<TTx>,
  options?: InboxOptions<TTx>,
  internals?: InboxInternals<never>,
): Inbox<TTx>;
export function makeInbox(
  client: PrismaClientLike,
  options?: InboxOptions,
  internals?: InboxInternals<never>,
): Inbox;
export function makeInbox<TTx = PrismaTransactionLike>(
  client: PrismaClientLike | TransactionAdapter<TTx>,
  options: InboxOptions<TTx> = {},
  internals: InboxInternals<never> = {},
): Inbox<TTx> {
  const inbox = new Inbox<TTx>(
    client,
    { logger: quietLogger, ...options, worker: { ...FAST_WORKER, ...options.worker } },
    internals as never,
  );
  (expect.getState().currentTestName === undefined ? openedForFile : openedInTest).push(inbox);
  return inbox;
}

/**
 * A Prisma-like client whose transactions commit but whose COMMIT answer is lost: each
 * $transaction runs on `prisma`, then throws as a connection dropped after the COMMIT would.
 */
export function lostCommitAnswer(prisma: PrismaClientLike): PrismaClientLike {
  return {
    $queryRawUnsafe: (q, ...v) => prisma.$queryRawUnsafe(q, ...v),
    $executeRawUnsafe: (q, ...v) => prisma.$executeRawUnsafe(q, ...v),
    $transaction: async (fn, options) => {
      await prisma.$transaction(fn as never, options);
      throw new Error('Connection terminated unexpectedly');
    },
  };
}

/**
 * The outcomes `events` observed, as a test of the worker's outcome reads them: each event's type
 * (an infrastructure error with its operation), without acceptances and without a lease renewal
 * that missed its deadline on a loaded machine (an infrastructure error at `heartbeat`).
 */
export function observedOutcomes(events: readonly InboxEvent[]): string[] {
  return events
    .filter(
      (e) => e.type !== 'accepted' && !(e.type === 'infrastructure-error' && e.operation === 'heartbeat'),
    )
    .map((e) => (e.type === 'infrastructure-error' ? `${e.type}:${e.operation}` : e.type));
}

/** Lets receipt `id`'s lease run out on the database (a second ago), its claim left as it is. */
export async function expireLease(t: TestDatabase, id: string): Promise<void> {
  await t.db.execute(
    `UPDATE ferry_inbox_receipts SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
    [id],
  );
}

/** The claim token of receipt `id`, once a worker claimed it (PROCESSING). */
export async function claimTokenOnceClaimed(t: TestDatabase, id: string): Promise<string> {
  await waitUntil('the receipt is claimed', async () => (await receiptRow(t, id)).status === 'PROCESSING', {
    timeoutMs: 20_000,
    intervalMs: 20,
  });
  return String((await receiptRow(t, id)).claim_token);
}

export function recorder(): { events: InboxEvent[]; observer: (event: InboxEvent) => void } {
  const events: InboxEvent[] = [];
  return { events, observer: (event) => void events.push(event) };
}

/** Waits for `check` to return a value other than undefined / false (the one wait-until of @ferry/testing). */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  return (await waitUntil(what, check, { timeoutMs, intervalMs: 20 })) as T;
}

/** A latch a test opens to let a stalled handler go on. */
export function latch(): { promise: Promise<void>; open: () => void; opened: () => boolean } {
  let open!: () => void;
  let isOpen = false;
  const promise = new Promise<void>((resolve) => {
    open = () => {
      isOpen = true;
      resolve();
    };
  });
  return { promise, open, opened: () => isOpen };
}

export async function createBusinessTable(t: TestDatabase): Promise<void> {
  await t.db.execute(
    'CREATE TABLE business_rows (id bigserial PRIMARY KEY, receipt_id uuid NOT NULL, note text)',
  );
}

/** A business write in the handler transaction (rolled back with it). */
export async function insertBusiness(context: InboxHandlerContext, note = 'done'): Promise<void> {
  await fromPrisma(context.tx).execute('INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)', [
    context.receiptId,
    note,
  ]);
}

export async function businessCount(t: TestDatabase, receiptId?: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM business_rows WHERE $1::uuid IS NULL OR receipt_id = $1::uuid',
    [receiptId ?? null],
  );
  return Number(row?.n ?? 0);
}

export async function receiptRow(t: TestDatabase, id: string): Promise<Record<string, unknown>> {
  const [row] = await t.db.query<Record<string, unknown>>(
    'SELECT * FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  if (!row) throw new Error(`no receipt ${id}`);
  return row;
}

let sequence = 0;
export function message(overrides: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    consumer: 'orders',
    messageId: `m-${sequence}-${Math.random().toString(36).slice(2)}`,
    tenantId: 'acme' as string | null,
    payload: { n: sequence } as Record<string, unknown>,
    ...overrides,
  };
}

/**
 * `count` receipts of a new tenant and consumer, accepted and claimed (claimReceipts, a minute's
 * lease) as a worker claims them: each claim has its own token, and no handler has begun.
 */
export async function claimedReceipts(
  t: TestDatabase,
  count = 1,
): Promise<{ tenantId: string; consumer: string; claims: ClaimedReceipt[] }> {
  const tenantId = `t-${randomUUID()}`;
  const consumer = `c-${randomUUID()}`;
  const inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } });
  for (let i = 0; i < count; i += 1) await inbox.accept(message({ tenantId, consumer }));
  const claims = await claimReceipts(t.db, [consumer], count, 60_000, 8);
  if (claims.length !== count) throw new Error(`claimed ${claims.length} of ${count} receipts`);
  return { tenantId, consumer, claims };
}

/**
 * A pool (4 connections) on `t` whose connections record the text of every statement they send
 * (whitespace collapsed): per connection in `statements`, and across connections in send order
 * in `sent`.
 */
export function recordingPool(t: TestDatabase): {
  pool: Pool;
  statements: Map<PoolClient, string[]>;
  sent: string[];
} {
  const pool = listened(new Pool({ connectionString: t.url, max: 6 })); // more than the default worker.concurrency (4): ferry's own statements need one
  const statements = new Map<PoolClient, string[]>();
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const own: string[] = [];
    statements.set(client, own);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const config = args[0] as string | { text?: string };
      const text = (typeof config === 'string' ? config : (config.text ?? '')).replace(/\s+/g, ' ').trim();
      own.push(text);
      sent.push(text);
      return query(...args);
    };
  });
  return { pool, statements, sent };
}

/**
 * A receipt of `tenantId` made DEAD by a handler that fails permanently (the requeue tests'
 * starting point), read back through the tenant's admin.
 */
export async function deadReceipt(t: TestDatabase, tenantId: string): Promise<InboxRecord> {
  const inbox = makeInbox(t.prisma, {
    handlers: {
      poison: async () => {
        throw new InboxPermanentError('poison');
      },
    },
  });
  const { record } = await inbox.accept(message({ tenantId, consumer: 'poison' }));
  for (let i = 0; i < 20 && (await receiptRow(t, record.id)).status !== 'DEAD'; i += 1) await inbox.runOnce();
  return (await new InboxAdmin(t.prisma).forTenant(tenantId).get(record.id))!;
}

/**
 * A DEAD receipt (deadReceipt) of a fresh tenant whose requeue_history is set by hand to
 * `history` (jsonb text), read, then requeued by an operator: the record before and after.
 */
export async function requeueHandSetHistory(
  t: TestDatabase,
  history: string,
): Promise<{ readonly id: string; readonly before: InboxRecord; readonly requeued: InboxRecord }> {
  const tenantId = `t-${randomUUID()}`;
  const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
  const { id } = await deadReceipt(t, tenantId);
  await t.db.query(`UPDATE ferry_inbox_receipts SET requeue_history = $2::jsonb WHERE id = $1::uuid`, [
    id,
    history,
  ]);
  const before = (await admin.get(id))!;
  const requeued = await admin.requeue({
    id,
    expectedVersion: before.rowVersion,
    actor: 'op',
    reason: 'hand-edited history',
  });
  return { id, before, requeued };
}

/**
 * What processReceipt and the claim queue are given by a worker (ProcessDeps) over the test
 * database: ferry's statements on `t.db`, the handler transactions on `t.prisma`.
 */
export function sqlProcessDeps(
  t: TestDatabase,
  options: Pick<InboxOptions, 'worker' | 'handlers' | 'observer'>,
): ProcessDeps<unknown> {
  const { worker, redact } = resolveInboxOptions({ worker: options.worker, handlers: options.handlers });
  return {
    ops: sqlWorkerOps(prismaTransactions(t.prisma), t.db, worker) as never,
    worker,
    handlers: (options.handlers ?? {}) as ProcessDeps<unknown>['handlers'],
    wrappers: [],
    random: Math.random,
    observer: options.observer,
    logger: quietLogger,
    redact,
    outage: new SessionOutage(),
  };
}

/**
 * Handler transactions on an application pool of one connection, held busy by the test until
 * `free()`; ferry's own statements on a pool of their own (the README's split of the two).
 * `end()` frees the connection if the test did not and ends both pools.
 */
export async function busyApplicationPool(t: TestDatabase): Promise<{
  adapter: ReturnType<typeof pgTransactions> & { db: ReturnType<typeof fromPg> };
  free: () => void;
  end: () => Promise<void>;
}> {
  const appPool = listened(new Pool({ connectionString: t.url, max: 1 }));
  const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const busy = await appPool.connect();
  let freed = false;
  const free = (): void => {
    if (freed) return;
    freed = true;
    busy.release();
  };
  return {
    adapter: { ...pgTransactions(appPool), db: fromPg(ferryPool) },
    free,
    end: async () => {
      free();
      await appPool.end();
      await ferryPool.end();
    },
  };
}
