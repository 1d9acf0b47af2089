/**
 * Shared pieces of the operations fault suite: condition waits with deadlines, the business
 * table the handlers write to, acceptance with redelivery, and the ledger read back from
 * PostgreSQL.
 */
import pino from 'pino';
import { fromPrisma, type Inbox, type InboxAcceptInput, type InboxHandlerContext } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';
import { TcpProxy } from '../harness/tcpProxy';
import { emptyLedger, reconcile, type Ledger } from '../harness/ledger';
import { waitFor as pollUntil } from '../harness/waitFor';

export const quietLogger = pino({ level: 'silent' });

/** harness/waitFor with a positional deadline, as the operations scenarios call it. */
export function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<T> {
  return pollUntil(what, check, { timeoutMs, intervalMs }) as Promise<T>;
}

/**
 * A fresh database with the business table and a TCP proxy in front of its server, made in
 * beforeAll and removed in afterAll (the proxy first). Call it after `faultSuite()`, so the
 * scenario's resources are closed before; read `t` and `proxy` inside the tests.
 */
export function proxiedDatabase(): { readonly t: TestDatabase; readonly proxy: TcpProxy } {
  const fixture = {} as { t: TestDatabase; proxy: TcpProxy };
  beforeAll(async () => {
    fixture.t = await createTestDatabase();
    await createBusinessTable(fixture.t);
    const server = new URL(fixture.t.url);
    fixture.proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
  });
  afterAll(async () => {
    await fixture.proxy?.close();
    await fixture.t?.drop();
  });
  return fixture;
}

/** Settles `promise` into a value the test can inspect, so a hang shows up as a waitFor timeout. */
export function track<T>(promise: Promise<T>): {
  settled: () => boolean;
  outcome: () => { value?: T; error?: unknown };
} {
  let result: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => void (result = { value }),
    (error: unknown) => void (result = { error }),
  );
  return { settled: () => result !== undefined, outcome: () => result ?? {} };
}

/**
 * Business rows written by handlers inside context.tx. No unique constraint on message_id on
 * purpose: an effect applied twice shows up as two rows.
 */
export async function createBusinessTable(t: TestDatabase): Promise<void> {
  await t.db.execute(
    'CREATE TABLE business_rows (id bigserial PRIMARY KEY, message_id text NOT NULL, receipt_id uuid NOT NULL)',
  );
}

export async function writeBusinessRow(context: InboxHandlerContext): Promise<void> {
  await fromPrisma(context.tx).execute(
    'INSERT INTO business_rows (message_id, receipt_id) VALUES ($1, $2::uuid)',
    [context.messageId, context.receiptId],
  );
}

export function inputs(prefix: string, count: number, consumer = 'orders'): InboxAcceptInput[] {
  return Array.from({ length: count }, (_, i) => ({
    consumer,
    messageId: `${prefix}-${i}`,
    tenantId: 'acme',
    payload: { n: i },
  }));
}

/** What the offering side saw: every item offered (redeliveries included) and each answer. */
export interface Offering {
  offered: number;
  accepted: number;
  duplicates: number;
  /** acceptMany calls that threw (the whole batch counted as not acknowledged). */
  failedBatches: number;
  readonly errors: string[];
}

export function newOffering(): Offering {
  return { offered: 0, accepted: 0, duplicates: 0, failedBatches: 0, errors: [] };
}

/**
 * Delivers one batch like a broker that redelivers until acknowledged: acceptMany is called
 * again with the same batch after every failure, until it answers or the deadline passes.
 */
export async function deliverUntilAcknowledged(
  inbox: Pick<Inbox, 'acceptMany'>,
  batch: readonly InboxAcceptInput[],
  offering: Offering,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    offering.offered += batch.length;
    try {
      const results = await inbox.acceptMany(batch);
      for (const result of results) {
        if (result.kind === 'accepted') offering.accepted += 1;
        else if (result.kind === 'duplicate') offering.duplicates += 1;
        else throw new Error(`unexpected acceptance result ${JSON.stringify(result)}`);
      }
      return;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('unexpected acceptance result')) throw error;
      offering.failedBatches += 1;
      const code = (error as { code?: string }).code ?? (error as Error).name;
      const retriable = (error as { retriable?: boolean }).retriable;
      offering.errors.push(`${code}${retriable === true ? ' (retriable)' : ''}`);
      if (retriable !== true) throw error;
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50)); // broker redelivery delay
    }
  }
}

export async function receiptStatuses(t: TestDatabase): Promise<Map<string, string>> {
  const rows = await t.db.query<{ message_id: string; status: string }>(
    'SELECT message_id, status FROM ferry_inbox_receipts',
  );
  return new Map(rows.map((row) => [row.message_id, row.status]));
}

export async function businessMessageIds(t: TestDatabase): Promise<string[]> {
  const rows = await t.db.query<{ message_id: string }>('SELECT message_id FROM business_rows');
  return rows.map((row) => row.message_id);
}

export async function countStatus(t: TestDatabase, status: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status = $1',
    [status],
  );
  return Number(row?.n ?? 0);
}

/** Waits until no receipt is unfinished (PENDING / RETRYABLE / PROCESSING). */
export async function waitUntilSettled(t: TestDatabase, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    'every receipt COMPLETED or DEAD',
    async () => {
      const [row] = await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status NOT IN ('COMPLETED', 'DEAD')",
      );
      return Number(row?.n ?? 1) === 0;
    },
    timeoutMs,
    100,
  );
}

/** The ledger from the offering side and what PostgreSQL holds (read through an unproxied client). */
export async function inboxLedger(
  t: TestDatabase,
  offeredIds: readonly string[],
  offering: Offering,
): Promise<Ledger> {
  const statuses = await receiptStatuses(t);
  const effects = await businessMessageIds(t);
  const stuck = [...statuses.values()].filter((s) => s !== 'COMPLETED' && s !== 'DEAD').length;
  return {
    ...emptyLedger(),
    offered: offering.offered,
    accepted: statuses.size,
    duplicatesAbsorbed: offering.duplicates,
    ...reconcile(offeredIds, effects),
    stuck,
  };
}
