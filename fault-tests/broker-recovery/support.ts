/**
 * Shared pieces of the broker-recovery scenarios: a fresh database with a business table, an inbox
 * whose handler writes one business row per message in `context.tx`, and the ledger arithmetic.
 */
import { randomUUID } from 'node:crypto';
import {
  createRelay,
  Inbox,
  INBOX_TABLE,
  type InboxEvent,
  type InboxOptions,
  type Publisher,
  type Relay,
  type SqlExecutor,
} from '@ferry/core';
import type { PrismaClient } from '../../generated/prisma/client';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';
import { reconcile, type Ledger } from '../harness/ledger';
import type { FaultSuite } from '../harness/scaffold';
import { waitFor } from '../harness/waitFor';

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export const EFFECTS_TABLE = 'fault_effects';

/** A fresh migrated database plus the business table the handlers write to (no unique key, so a
 * second application of one message shows up as a second row). */
export async function openDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  await database.db.query(
    `CREATE TABLE ${EFFECTS_TABLE} (id bigserial PRIMARY KEY, consumer text NOT NULL, message_id text NOT NULL,
       attempt int NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  return database;
}

export interface Counters {
  duplicates: number;
  retries: number;
  dead: number;
}

export interface ScenarioInbox {
  readonly inbox: Inbox<Tx>;
  readonly counters: Counters;
}

/**
 * A real inbox with the worker running: the handler of `consumer` inserts one business row in the
 * handler's transaction. `fail(messageId, attempt)` may throw to make an attempt fail.
 */
export async function startInbox(
  prisma: PrismaClient,
  consumer: string,
  options: {
    fail?: (messageId: string, attempt: number) => void;
    worker?: InboxOptions<Tx>['worker'];
    maxPayloadBytes?: number;
  } = {},
): Promise<ScenarioInbox> {
  const counters: Counters = { duplicates: 0, retries: 0, dead: 0 };
  const inbox = new Inbox<Tx>(prisma, {
    global: 'shared',
    ...(options.maxPayloadBytes === undefined ? {} : { maxPayloadBytes: options.maxPayloadBytes }),
    worker: { enabled: true, concurrency: 4, pollIntervalMs: 50, ...options.worker },
    observer: (event: InboxEvent) => {
      if (event.type === 'duplicate') counters.duplicates += 1;
      if (event.type === 'retry') counters.retries += 1;
      if (event.type === 'dead') counters.dead += 1;
    },
    handlers: {
      [consumer]: async (_payload, context) => {
        await context.tx.$executeRawUnsafe(
          `INSERT INTO ${EFFECTS_TABLE} (consumer, message_id, attempt) VALUES ($1, $2, $3)`,
          context.consumer,
          context.messageId,
          context.attempt,
        );
        options.fail?.(context.messageId, context.attempt);
      },
    },
  });
  await inbox.initialize();
  return { inbox, counters };
}

export function messageIds(count: number, prefix: string): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}-${randomUUID()}`);
}

export async function effectIds(db: SqlExecutor, consumer: string): Promise<string[]> {
  const rows = await db.query<{ message_id: string }>(
    `SELECT message_id FROM ${EFFECTS_TABLE} WHERE consumer = $1`,
    [consumer],
  );
  return rows.map((row) => row.message_id);
}

export async function receiptCounts(db: SqlExecutor, consumer: string): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = $1 GROUP BY status`,
    [consumer],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** Waits (bounded) until the condition holds; returns false instead of throwing on timeout so the
 * ledger is still printed and names what is missing. */
export async function settle(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  try {
    await waitFor(what, probe, { timeoutMs, intervalMs: 200 });
    return true;
  } catch (error) {
    process.stdout.write(`${(error as Error).message}\n`);
    return false;
  }
}

/**
 * The inbox-side ledger: offered ids against business rows; accepted = distinct receipts;
 * stuck = receipts neither COMPLETED nor DEAD (the only terminal states).
 */
export async function inboxLedger(
  db: SqlExecutor,
  consumer: string,
  offeredIds: readonly string[],
  offered: number,
  counters: Counters,
): Promise<Ledger> {
  const counts = await receiptCounts(db, consumer);
  const accepted = Object.values(counts).reduce((a, b) => a + b, 0);
  const stuck = accepted - (counts.COMPLETED ?? 0) - (counts.DEAD ?? 0);
  return {
    offered,
    accepted,
    duplicatesAbsorbed: counters.duplicates,
    ...reconcile(offeredIds, await effectIds(db, consumer)),
    stuck,
  };
}

/** Times the circuit of a relay started by startCircuitRelay opened and closed, so far. */
export interface CircuitCount {
  readonly opened: number;
  readonly closed: number;
}

/**
 * The outage scenarios' relay, started: polls every 50 ms in batches of 20, a fixed retry delay
 * of `initialDelay` (the attempts are each event's maxRetries, fixed at emit), and a circuit that opens for 200 ms to 1 s;
 * `circuit()` reads how often it opened and closed. Closed by the suite's cleanup.
 */
export function startCircuitRelay(
  suite: FaultSuite,
  db: SqlExecutor,
  publisher: Publisher,
  retry: { readonly initialDelay: number },
): { relay: Relay; circuit: () => CircuitCount } {
  let opened = 0;
  let closed = 0;
  const relay = createRelay({
    db,
    publisher,
    options: {
      pollInterval: 50,
      batchSize: 20,
      retry: {
        backoff: 'fixed',
        initialDelay: retry.initialDelay,
        maxDelay: retry.initialDelay,
      },
      circuit: { openMs: 200, maxOpenMs: 1000 },
    },
    observer: (event) => {
      if (event.type === 'circuit-opened') opened += 1;
      if (event.type === 'circuit-closed') closed += 1;
    },
  });
  suite.defer(() => relay.close());
  relay.start();
  return { relay, circuit: () => ({ opened, closed }) };
}
