/**
 * Scenario: TCP disconnect between the application and PostgreSQL.
 *
 * Breaks: while messages are being accepted (acceptMany) and handled by the inbox worker, the
 * TCP proxy between the application's Prisma client and PostgreSQL resets every connection
 * (RST both ways), twice. One handler is held inside its transaction (after its business write)
 * across the first reset, so at least one handler transaction is certainly cut mid-flight.
 *
 * Invariant: a cut handler transaction rolls back (its business row is never visible); the SAME
 * Prisma client (no new client, no restart) reconnects through the proxy and goes on accepting
 * and processing; acceptance that failed is redelivered; every message ends COMPLETED with
 * exactly one business row. Ledger: lost = 0, appliedTwice = 0, stuck = 0.
 *
 * Outbox: each handler also emits an outbox event in context.tx, and an outbox relay on the same
 * proxied client publishes to an in-memory broker through the resets. Invariant: exactly one
 * committed event per message (a cut handler's emit rolls back with it), every event SENT and
 * delivered at least once (repeats after a lost SENT commit are at-least-once delivery and are
 * reported, not failed). Ledger tcp-disconnect/outbox: lost = 0, appliedTwice = 0, stuck = 0.
 */
import { prismaFor } from '../../test-support/database';
import { createRelay, emit, fromPrisma, Inbox, type InboxAcceptInput, type InboxEvent } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { assertLedger, emptyLedger, reconcile } from '../harness/ledger';
import {
  proxiedDatabase,
  deliverUntilAcknowledged,
  inboxLedger,
  inputs,
  newOffering,
  quietLogger,
  waitFor,
  waitUntilSettled,
  writeBusinessRow,
} from './support';
import { faultSuite } from '../harness/scaffold';

const MESSAGES = 200;
const BATCH = 10;

describe('operations: tcp-disconnect', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('rolls back cut handler transactions and recovers through the same Prisma client', async () => {
    const { t, proxy } = fixture;
    // The application's client, through the proxy. Timeouts are bounded so a dead connection
    // surfaces as an error instead of a hang (see fault-tests/README.md, "operations").
    const prisma = prismaFor(proxy.urlFor(t.url), {
      max: 6,
      connectionTimeoutMillis: 3_000,
      query_timeout: 5_000,
      idleTimeoutMillis: 10_000,
    });
    const events: InboxEvent[] = [];
    const heldAfterWrite = { reached: false, release: (): void => undefined };
    const released = new Promise<void>((resolve) => (heldAfterWrite.release = resolve));
    const handlerCalls = new Map<string, number>();
    const inbox = new Inbox(prisma, {
      logger: quietLogger,
      observer: (event) => void events.push(event),
      handlers: {
        orders: async (_payload, context) => {
          handlerCalls.set(context.messageId, (handlerCalls.get(context.messageId) ?? 0) + 1);
          await writeBusinessRow(context);
          if (context.messageId === 'td-held' && context.attempt === 1) {
            heldAfterWrite.reached = true;
            await released; // the reset happens while this transaction is open
          }
          // More work in the same transaction after the write: an outbox event for the relay,
          // then a short statement. A reset anywhere here must roll both writes back.
          await emit(context.tx, {
            type: 'order.handled',
            payload: { messageId: context.messageId },
            correlationId: context.messageId,
          });
          await context.tx.$executeRawUnsafe('SELECT pg_sleep(0.005)');
        },
      },
      worker: {
        concurrency: 4,
        pollIntervalMs: 20,
        leaseMs: 3_000,
        heartbeatIntervalMs: 300,
        transactionTimeoutMs: 8_000,
        transactionMaxWaitMs: 3_000,
        retryBaseMs: 10,
        retryMaxMs: 100,
        shutdownTimeoutMs: 5_000,
      },
    });
    suite.defer(() => prisma.$disconnect());
    suite.defer(async () => {
      heldAfterWrite.release();
      await inbox.close();
    });
    // The outbox relay runs on the same proxied client and goes through the resets too.
    const publisher = new InMemoryPublisher();
    const relay = createRelay({
      db: fromPrisma(prisma),
      publisher,
      logger: quietLogger,
      options: {
        pollInterval: 20,
        batchSize: 20,
        lease: { duration: 3_000, heartbeatInterval: 500 },
        retry: { initialDelay: 10, maxDelay: 100 },
      },
    });
    suite.defer(() => relay.close());
    await inbox.initialize();
    inbox.start();
    relay.start();

    const offering = newOffering();
    const all: InboxAcceptInput[] = [
      { consumer: 'orders', messageId: 'td-held', tenantId: 'acme', payload: { held: true } },
    ];
    all.push(...inputs('td', MESSAGES - 1));
    const offeredIds = all.map((input) => input.messageId);
    let cursor = 0;
    const completed = () => events.filter((e) => e.type === 'completed').length;
    const producer = (async () => {
      while (cursor < all.length) {
        // Like a broker prefetch: keep acceptance running alongside processing, not ahead of it.
        await waitFor('backlog below 40', () => cursor - completed() < 40, 30_000, 5);
        const batch = all.slice(cursor, cursor + BATCH);
        await deliverUntilAcknowledged(inbox, batch, offering);
        cursor += BATCH;
      }
    })();

    // First reset: mid-stream, with the held handler inside its transaction after its write.
    await waitFor('the held handler inside its transaction', () => heldAfterWrite.reached);
    await waitFor('some completions', () => completed() >= 20);
    const connectionsBefore = proxy.accepted;
    expect(proxy.resetAll()).toBeGreaterThan(0);
    heldAfterWrite.release();

    // Second reset, later in the stream.
    await waitFor('more acceptance', () => cursor >= MESSAGES / 2);
    proxy.resetAll();

    await producer;
    await waitUntilSettled(t);

    // The same client still works, on connections opened after the resets.
    expect(await prisma.$queryRawUnsafe<Array<{ ok: number }>>('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    expect(proxy.accepted).toBeGreaterThan(connectionsBefore);
    await waitFor('every outbox event SENT', async () => {
      const [row] = await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'",
      );
      return Number(row?.n ?? 1) === 0;
    });
    await inbox.close();
    await relay.close();
    await prisma.$disconnect();

    // The held transaction was cut after its write; that write never became visible, and the
    // message was handled again and completed once.
    expect(handlerCalls.get('td-held')).toBeGreaterThanOrEqual(2);
    const [held] = await t.db.query<{ status: string; lifetime_attempts: number; rows: number }>(
      `SELECT r.status, r.lifetime_attempts,
              (SELECT count(*)::int FROM business_rows b WHERE b.message_id = r.message_id) AS rows
         FROM ferry_inbox_receipts r WHERE r.message_id = 'td-held'`,
    );
    expect(held).toMatchObject({ status: 'COMPLETED', rows: 1 });
    expect(held!.lifetime_attempts).toBeGreaterThanOrEqual(2);

    const ledger = await inboxLedger(t, offeredIds, offering);
    process.stdout.write(
      `tcp-disconnect: resets=${proxy.resets} proxyConnections=${proxy.accepted} failedAcceptBatches=${offering.failedBatches} ` +
        `retries=${events.filter((e) => e.type === 'retry').length} ` +
        `infrastructureErrors=${events.filter((e) => e.type === 'infrastructure-error').length}\n`,
    );
    assertLedger('tcp-disconnect', ledger);
    expect(ledger.accepted).toBe(MESSAGES);
    expect(ledger.effectsApplied).toBe(MESSAGES);
    expect(await t.db.query("SELECT id FROM ferry_inbox_receipts WHERE status <> 'COMPLETED'")).toEqual([]);

    // Outbox side: one committed event per message (a cut handler's emit rolled back with it),
    // every event SENT and delivered to the broker at least once (at-least-once delivery: a
    // repeat after a lost SENT commit is allowed and reported, consumers deduplicate on the id).
    const rows = await t.db.query<{ id: string; correlation_id: string; status: string }>(
      'SELECT id, correlation_id, status FROM outbox_events',
    );
    const deliveries = publisher.deliveryCounts();
    const undelivered = rows.filter((row) => !deliveries.has(row.id)).length;
    const outboxLedger = {
      ...emptyLedger(),
      offered: MESSAGES,
      accepted: rows.length,
      duplicatesAbsorbed: [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0),
      ...reconcile(
        offeredIds,
        rows.map((row) => row.correlation_id),
      ),
      stuck: rows.filter((row) => row.status !== 'SENT').length + undelivered,
    };
    process.stdout.write(
      `tcp-disconnect/outbox: events=${rows.length} brokerDeliveries=${publisher.delivered.length} ` +
        `brokerRepeats=${outboxLedger.duplicatesAbsorbed}\n`,
    );
    assertLedger('tcp-disconnect/outbox', outboxLedger);
    expect(rows).toHaveLength(MESSAGES);
  });
});
