/**
 * Scenario: TCP blackhole between the application and PostgreSQL.
 *
 * Breaks: while the inbox worker is processing (one handler held inside its transaction after
 * its business write), the TCP proxy turns into a blackhole: connections, old and new, are
 * accepted but every byte is dropped and nothing is answered, no FIN, no RST. Acceptance is
 * attempted during the blackhole. After a while the proxy passes traffic again; connections
 * that lived through the blackhole are reset by the proxy when it heals.
 *
 * Driver timeouts, configured explicitly on the application's PrismaPg pool (pg options):
 * `connectionTimeoutMillis: 2000` (connect + startup), `query_timeout: 3000` (client-side read
 * timeout per query: the one that fires in a blackhole), `statement_timeout: 3000` (server-side,
 * the same bound when the server is reachable), `idleTimeoutMillis: 5000`; ferry's worker:
 * `transactionMaxWaitMs: 2000`, `transactionTimeoutMs: 6000`, `leaseMs: 3000`.
 *
 * Invariant: nothing hangs — acceptance during the blackhole rejects (retriable, nothing
 * acknowledged) and the held handler's next statement fails, both within a generous deadline;
 * the held transaction's write never becomes visible; after the blackhole the SAME Prisma client
 * recovers, the failed batch is redelivered and every message completes exactly once.
 * Ledger: lost = 0, appliedTwice = 0, stuck = 0.
 */
import { Inbox, isFerryError, type InboxEvent } from '@ferry/core';
import { prismaFor } from '../../test-support/database';
import { assertLedger } from '../harness/ledger';
import {
  proxiedDatabase,
  track,
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

describe('operations: tcp-blackhole', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('fails within bounded time during the blackhole and recovers through the same Prisma client', async () => {
    const { t, proxy } = fixture;
    const prisma = prismaFor(proxy.urlFor(t.url), {
      max: 6,
      connectionTimeoutMillis: 2_000,
      query_timeout: 3_000,
      statement_timeout: 3_000,
      idleTimeoutMillis: 5_000,
    });
    suite.defer(() => prisma.$disconnect());
    const events: InboxEvent[] = [];
    let heldReached = false;
    let heldFailure: unknown;
    let releaseHeld!: () => void;
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    const inbox = new Inbox(prisma, {
      logger: quietLogger,
      observer: (event) => void events.push(event),
      handlers: {
        orders: async (_payload, context) => {
          await writeBusinessRow(context);
          if (context.messageId !== 'bh-held' || context.lifetimeAttempts !== 1) return;
          heldReached = true;
          await held;
          try {
            await context.tx.$executeRawUnsafe('SELECT 1'); // sent into the blackhole
          } catch (error) {
            heldFailure = error;
            throw error;
          }
        },
      },
      worker: {
        concurrency: 3,
        pollIntervalMs: 50,
        leaseMs: 3_000,
        heartbeatIntervalMs: 300,
        transactionTimeoutMs: 6_000,
        transactionMaxWaitMs: 2_000,
        retryBaseMs: 10,
        retryMaxMs: 100,
        shutdownTimeoutMs: 3_000,
      },
    });
    suite.defer(async () => {
      releaseHeld();
      await inbox.close();
    });
    await inbox.initialize();
    inbox.start();
    const offering = newOffering();

    // Normal traffic first, then the held message.
    const before = inputs('bh-before', 20);
    await deliverUntilAcknowledged(inbox, before, offering);
    const heldInput = { consumer: 'orders', messageId: 'bh-held', tenantId: 'acme', payload: { held: true } };
    await deliverUntilAcknowledged(inbox, [heldInput], offering);
    await waitFor('the held handler inside its transaction', () => heldReached);

    // Blackhole: the held transaction's next statement and a new acceptance both go nowhere.
    await proxy.setMode('blackhole');
    releaseHeld();
    const during = inputs('bh-during', 10);
    offering.offered += during.length;
    const acceptance = track(inbox.acceptMany(during));
    await waitFor('acceptance during the blackhole to fail', () => acceptance.settled(), 30_000);
    const { error } = acceptance.outcome() as { error?: unknown };
    // A pooled connection's query_timeout (a timeout, FERRY_TIMEOUT) or a new connection's connect
    // timeout (FERRY_DATABASE_UNAVAILABLE), whichever the acceptance met first: both are retriable
    // and batch-wide, so a transport holds the batch.
    expect(isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE') || isFerryError(error, 'FERRY_TIMEOUT')).toBe(
      true,
    );
    expect((error as { retriable: boolean }).retriable).toBe(true);
    offering.failedBatches += 1;
    await waitFor('the held statement to fail', () => heldFailure !== undefined, 30_000);

    // Heal; redeliver the refused batch; everything completes once through the same client.
    await proxy.setMode('pass');
    await deliverUntilAcknowledged(inbox, during, offering, 30_000);
    await waitUntilSettled(t, 40_000);
    expect(await prisma.$queryRawUnsafe<Array<{ ok: number }>>('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    await inbox.close();

    const [heldRow] = await t.db.query<{ status: string; lifetime_attempts: number; rows: number }>(
      `SELECT r.status, r.lifetime_attempts,
              (SELECT count(*)::int FROM business_rows b WHERE b.message_id = r.message_id) AS rows
         FROM ferry_inbox_receipts r WHERE r.message_id = 'bh-held'`,
    );
    expect(heldRow).toMatchObject({ status: 'COMPLETED', rows: 1 });
    expect(heldRow!.lifetime_attempts).toBeGreaterThanOrEqual(2);

    const offeredIds = [...before, heldInput, ...during].map((input) => input.messageId);
    process.stdout.write(
      `tcp-blackhole: heldError=${String((heldFailure as Error).message)
        .split('\n')
        .pop()} ` +
        `acceptError=${(error as Error).message} proxyConnections=${proxy.accepted} resets=${proxy.resets} ` +
        `events=${JSON.stringify(countTypes(events))}\n`,
    );
    const ledger = await inboxLedger(t, offeredIds, offering);
    assertLedger('tcp-blackhole', ledger);
    expect(ledger.accepted).toBe(offeredIds.length);
    expect(ledger.effectsApplied).toBe(offeredIds.length);
  });
});

function countTypes(events: InboxEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) counts[event.type] = (counts[event.type] ?? 0) + 1;
  return counts;
}
