/**
 * Scenario: tablespace exhaustion.
 *
 * Invariant: when the business tablespace is full, a handler's insert fails with SQLSTATE 53100
 * (disk full); its transaction rolls back (no business row, the receipt is not COMPLETED) and the
 * receipt goes to a retry, neither completed nor lost. Acceptance keeps working because ferry's
 * inbox table lives in the default tablespace. Once space is freed the retries complete and every
 * message has exactly one business effect.
 * Outbox relay: each handler emits its event BEFORE the business write, so every 53100 rolls back
 * an event that was already written in the handler's transaction; a relay runs throughout. No
 * event of a rolled-back handler is ever visible or published, and after recovery every message
 * has exactly one committed event, SENT and delivered at least once, none stuck.
 *
 * Break: the business table lives in a tablespace on a 16 MiB tmpfs; a filler table in the same
 * tablespace is grown until PostgreSQL raises 53100 ("could not extend file ...: No space left on
 * device"). Recovery: the filler table is dropped, which frees its space.
 *
 * fsync is off here: nothing crashes in this scenario, so durability settings do not change what it
 * proves. Needs root (mount).
 */
import type { Inbox, InboxEvent } from '@ferry/core';
import { assertLedger } from '../harness/ledger';
import { BoundedFilesystem, PrivateCluster, waitUntil } from '../harness/privatePostgres';
import type { PrismaClient } from '../../generated/prisma/client';
import { emitHandledEvent, OutboxSide } from './outboxSide';
import {
  APP_DATABASE,
  Producer,
  ledgerFrom,
  makeInbox,
  prepareAppDatabase,
  prismaOn,
  receiptCounts,
  writeBusinessRow,
  scenarioSteps,
} from './support';
import { cleanUp, CLEANUP_HOOK_MS } from '../harness/scaffold';

const SCENARIO = 'database/tablespace-exhaustion';
const TABLESPACE = 'business_space';

/**
 * The SQLSTATE of a PostgreSQL error as Prisma reports it through the pg driver adapter: a raw query
 * failure is PrismaClientKnownRequestError P2010 whose `meta.driverAdapterError.cause.originalCode`
 * holds the database's code.
 */
function sqlState(error: unknown): string | undefined {
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const record = current as Record<string, unknown>;
    if (typeof record.originalCode === 'string') return record.originalCode;
    queue.push(record.meta, record.driverAdapterError, record.cause);
  }
  return undefined;
}

describe('tablespace exhaustion', () => {
  let filesystem: BoundedFilesystem | undefined;
  let cluster: PrivateCluster | undefined;
  let prisma: PrismaClient | undefined;
  let inbox: Inbox | undefined;
  const outbox = new OutboxSide();

  // Each step bounded and run whatever the earlier ones did: the tmpfs is unmounted also when a
  // close hangs or the cluster's destroy fails.
  afterAll(
    () =>
      cleanUp([
        ...scenarioSteps({ inboxes: [inbox], outbox, clients: [prisma], clusters: [cluster] }),
        () => filesystem?.unmount(),
      ]),
    CLEANUP_HOOK_MS,
  );

  it('rolls a 53100 handler transaction back into a retry and completes it after space is freed', async () => {
    filesystem = await BoundedFilesystem.mount(16);
    cluster = await PrivateCluster.create('disk-full', { settings: { fsync: 'off' } });
    await cluster.query(`CREATE TABLESPACE ${TABLESPACE} LOCATION '${filesystem.subdir('ts')}'`);
    await prepareAppDatabase(cluster, TABLESPACE);
    await cluster.query(
      // No autovacuum: a vacuum that truncated the tail of a failed fill would give space back.
      `CREATE TABLE filler (body text NOT NULL) WITH (autovacuum_enabled = false) TABLESPACE ${TABLESPACE}`,
      [],
      APP_DATABASE,
    );
    const [where] = await cluster.query<{ business: string | null; inbox: string | null }>(
      `SELECT (SELECT t.spcname FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
                WHERE c.relname = 'business_effects') AS business,
              (SELECT t.spcname FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace
                WHERE c.relname = 'ferry_inbox_receipts') AS inbox`,
      [],
      APP_DATABASE,
    );
    expect(where).toEqual({ business: TABLESPACE, inbox: null });

    prisma = prismaOn(cluster.url(APP_DATABASE));
    const handlerErrors: string[] = [];
    const events: InboxEvent[] = [];
    // ~1 KB of incompressible-enough text per business row, so a few rows fill a page and the
    // table must extend its file (where the full filesystem bites) within a handful of messages.
    inbox = makeInbox(
      prisma,
      async (_payload, context) => {
        try {
          await emitHandledEvent(context);
          await writeBusinessRow(context, `${context.messageId}:${'x'.repeat(1_000)}`);
        } catch (error) {
          handlerErrors.push(sqlState(error) ?? String(error));
          throw error;
        }
      },
      {
        observer: (event) => void events.push(event),
        worker: { retryBaseMs: 100, retryMaxMs: 800, maxAttempts: 100 },
      },
    );
    await inbox.initialize();
    inbox.start();
    outbox.startRelay(prisma);
    const producer = new Producer(inbox, 'disk');

    // Normal operation first.
    await producer.offerBatch(20);
    await waitUntil('the first batch completed', async () => (await receiptCounts(prisma!)).completed === 20);

    // PostgreSQL extends a table by many pages at once when inserters wait on its extension lock
    // (RelationAddExtraBlocks): the first batch can leave the business table with empty pages, and
    // every handler could then write while the filesystem is full. Rewrite the table compactly so
    // that only its last page has room, then fill the filesystem.
    const pages = async (): Promise<number> => {
      const [size] = await cluster!.query<{ pages: number }>(
        `SELECT (pg_relation_size('business_effects') / 8192)::int AS pages`,
        [],
        APP_DATABASE,
      );
      return size!.pages;
    };
    const pagesBefore = await pages();
    await cluster.query('VACUUM FULL business_effects', [], APP_DATABASE);
    process.stdout.write(`${SCENARIO}: business table ${pagesBefore} -> ${await pages()} pages\n`);

    // Exhaust the tablespace: grow the filler until PostgreSQL itself reports 53100.
    const fillError = await waitUntil(
      'the business tablespace to fill up',
      async () => {
        try {
          await cluster!.query(
            `INSERT INTO filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 2000) g`,
            [],
            APP_DATABASE,
          );
          return undefined;
        } catch (error) {
          return error as { code?: string; message: string };
        }
      },
      60_000,
      0,
    );
    expect(fillError.code).toBe('53100');
    expect(fillError.message).toMatch(/could not extend file .*No space left on device/);
    process.stdout.write(`${SCENARIO}: filler stopped with ${fillError.code} "${fillError.message}"\n`);

    // Acceptance still works (inbox storage is in the default tablespace); handlers now fail.
    const completedBeforeFull = (await receiptCounts(prisma)).completed;
    await producer.offerBatch(60);
    let whileFull = '';
    await waitUntil(
      'handlers failing with 53100 and their receipts scheduled for retry',
      async () => {
        const [row] = await prisma!.$queryRawUnsafe<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM ferry_inbox_receipts
            WHERE status = 'RETRYABLE' AND lifetime_attempts >= 2`,
        );
        const failed = handlerErrors.filter((code) => code === '53100').length;
        whileFull = JSON.stringify({ retriedTwice: row?.n, failed, ...(await receiptCounts(prisma!)) });
        return (row?.n ?? 0) >= 10 && failed >= 20;
      },
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; state ${whileFull}, business table ${pagesBefore} pages before`);
    });

    // Rolled back: no business row without a COMPLETED receipt, no receipt completed without one.
    const [consistency] = await prisma.$queryRawUnsafe<
      { orphan_effects: number; completed_without_effect: number; completed: number; retryable: number }[]
    >(
      `SELECT (SELECT count(*)::int FROM business_effects e
                 JOIN ferry_inbox_receipts r ON r.message_id = e.message_id
                WHERE r.status <> 'COMPLETED') AS orphan_effects,
              (SELECT count(*)::int FROM ferry_inbox_receipts r
                WHERE r.status = 'COMPLETED'
                  AND NOT EXISTS (SELECT 1 FROM business_effects e WHERE e.message_id = r.message_id))
                AS completed_without_effect,
              (SELECT count(*)::int FROM ferry_inbox_receipts WHERE status = 'COMPLETED') AS completed,
              (SELECT count(*)::int FROM ferry_inbox_receipts WHERE status = 'RETRYABLE') AS retryable`,
    );
    expect(consistency!.orphan_effects).toBe(0);
    // Only the room left in the business table's last page: the scenario really ran full.
    expect(consistency!.completed - completedBeforeFull).toBeLessThan(10);
    // The same for the outbox: no event of a rolled-back handler is visible, none was published.
    const [escaped] = await prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM outbox_events o
         JOIN ferry_inbox_receipts r ON r.message_id = o.correlation_id
        WHERE r.status <> 'COMPLETED'`,
    );
    expect(escaped!.n).toBe(0);
    const completedIds = new Set(
      (
        await prisma.$queryRawUnsafe<{ message_id: string }[]>(
          "SELECT message_id FROM ferry_inbox_receipts WHERE status = 'COMPLETED'",
        )
      ).map((row) => row.message_id),
    );
    const publishedEarly = outbox.broker.delivered.filter((m) => !completedIds.has(m.correlationId ?? ''));
    expect(publishedEarly).toEqual([]);
    expect(consistency!.completed_without_effect).toBe(0);
    expect(consistency!.retryable).toBeGreaterThan(0);
    expect(events.some((event) => event.type === 'dead')).toBe(false);
    const retryErrors = events.filter((event) => event.type === 'retry').map((event) => event.error);
    expect(retryErrors.some((error) => /No space left on device|53100/.test(error))).toBe(true);
    process.stdout.write(
      `${SCENARIO}: while full: completed ${completedBeforeFull} -> ${consistency!.completed}, ` +
        `retryable=${consistency!.retryable}, handler errors ${handlerErrors.length} ` +
        `(53100: ${handlerErrors.filter((code) => code === '53100').length}), space ${JSON.stringify(await filesystem.usage())}\n`,
    );

    // Free the space; the retries complete.
    await cluster.query('DROP TABLE filler', [], APP_DATABASE);
    await waitUntil(
      'every receipt completed after space was freed',
      async () => {
        const counts = await receiptCounts(prisma!);
        return counts.unfinished === 0 && counts.total === 80;
      },
      60_000,
    );

    await waitUntil('every outbox event SENT after space was freed', () => outbox.allSent(prisma!), 60_000);
    await inbox.close();
    await outbox.closeAll();
    const outboxLedger = await outbox.ledger(prisma, producer.offered);
    assertLedger(`${SCENARIO}/outbox`, outboxLedger);
    expect(outboxLedger.accepted).toBe(80);
    const ledger = await ledgerFrom(prisma, producer);
    assertLedger(SCENARIO, ledger);
    expect(ledger.accepted).toBe(80);
    expect(handlerErrors.every((code) => code === '53100')).toBe(true);
  }, 90_000);
});
