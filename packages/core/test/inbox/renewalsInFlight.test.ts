/**
 * Lease renewals a slow database leaves unanswered (the lease kit, lease/heartbeat.ts). On Prisma
 * a renewal the kit gave up on keeps running, and its pooled connection, until the database
 * answers: sending one more every heartbeat stacked up to (leaseMs - heartbeatIntervalMs) /
 * heartbeatIntervalMs of them per lease, taking the connections the handlers and the renewals
 * that would prove the lease needed. The kit keeps at most two of one lease in flight (the
 * abandoned one and one fresh attempt), so one renewal stuck on a silent connection does not keep
 * the next, on a healthy one, from proving the lease. On node-postgres the renewal's connection is
 * closed when the kit gives up on it, but PostgreSQL goes on running the statement: its backend is
 * ended (lease/renewalLock.ts), so those do not pile up on the server either.
 */
import { Pool } from 'pg';
import {
  InboxLeaseLostError,
  pgTransactions,
  type PrismaClientLike,
  type TransactionAdapter,
} from '@ferry/core';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { holdRenewals, type HeldRenewals } from '../../../../test-support/heldRenewals';
import { RENEWALS_IN_FLIGHT_AT_MOST } from '../../src/lease/heartbeat';
import { latch, makeInbox, message, receiptRow, waitFor } from './helpers';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  await t.drop();
});

const WORKER = {
  concurrency: 1,
  prefetch: 0,
  leaseMs: 3_000,
  heartbeatIntervalMs: 300,
  transactionTimeoutMs: 60_000,
  shutdownTimeoutMs: 0,
} as const;

/** An inbox on `client` whose one handler waits for its lease to be lost: `reason()` is then its signal's reason. */
function untilLost(client: PrismaClientLike | TransactionAdapter<unknown>) {
  const started = latch();
  let reason: unknown;
  const inbox = makeInbox(client as PrismaClientLike, {
    statementTimeoutMs: 60_000,
    worker: WORKER,
    handlers: {
      held: async (_payload, context) => {
        started.open();
        await new Promise<void>((resolve) =>
          context.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        reason = context.signal.reason;
        throw reason;
      },
    },
  });
  return { inbox, started: started.promise, reason: () => reason };
}

/**
 * An inbox on `prisma` whose one handler runs until renewals have reached the server over more
 * than a whole lease (without them proving it, the lease was lost), or its lease is lost.
 */
function untilRenewed(prisma: PrismaClientLike, holds: HeldRenewals) {
  const enough = Math.ceil(WORKER.leaseMs / WORKER.heartbeatIntervalMs) + 2;
  let aborted = false;
  const inbox = makeInbox(prisma, {
    statementTimeoutMs: 60_000,
    worker: WORKER,
    handlers: {
      held: async (_payload, context) => {
        await waitFor(
          `${enough} renewals sent, or the lease lost`,
          async () => context.signal.aborted || (await holds.sent()) >= enough,
          60_000,
        );
        aborted = context.signal.aborted;
        if (aborted) throw context.signal.reason;
      },
    },
  });
  return { inbox, aborted: () => aborted };
}

describe("a worker's lease renewals that the database leaves unanswered", () => {
  it('Prisma: holds at most two renewal statements of a lease at once, and the lease is lost at its local expiry', async () => {
    // Room for every renewal main sent: (3,000 - 300) / 300 of them, and the handler's transaction.
    const prisma = t.newClient({ max: 12 });
    const holds = await holdRenewals(t.db, 'ferry_inbox_receipts', 'all');
    const { inbox, started, reason } = untilLost(prisma);
    await inbox.accept(message({ consumer: 'held' }));
    const run = inbox.runOnce();
    try {
      await started;
      await waitFor('the lease to be lost', async () => reason() !== undefined, 30_000);
      expect(reason()).toBeInstanceOf(InboxLeaseLostError);
      // Every renewal sent is held for good: none answered, none can have ended.
      await waitFor('the renewals sent to be held', async () => (await holds.held()) >= 2);
      expect(await holds.sent()).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
      expect(await holds.held()).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    } finally {
      await holds.release();
    }
    await run;
    await inbox.close();
  });

  it('Prisma: keeps a lease whose first renewal hangs for ever while the later ones are answered', async () => {
    const holds = await holdRenewals(t.db, 'ferry_inbox_receipts', 'first');
    const { inbox, aborted } = untilRenewed(t.newClient({ max: 4 }), holds);
    const { record } = await inbox.accept(message({ consumer: 'held' }));
    try {
      await inbox.runOnce();
      expect(aborted()).toBe(false);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED' });
      expect(await holds.held()).toBe(1);
    } finally {
      await holds.release();
    }
    await inbox.close();
  });

  it('Prisma: keeps a lease whose renewals are all answered late, each after the next was sent', async () => {
    const holds = await holdRenewals(t.db, 'ferry_inbox_receipts', 'all');
    const { inbox, aborted } = untilRenewed(t.newClient({ max: 6 }), holds);
    const { record } = await inbox.accept(message({ consumer: 'held' }));
    // Each renewal answers once the next one reached the server: after its deadline (the next
    // is sent once it missed it), and never two renewals unanswered for long.
    let done = false;
    const answering = waitFor(
      'the handler to end',
      async () => {
        await holds.releaseUpTo((await holds.sent()) - 1);
        return done;
      },
      60_000,
    );
    try {
      await inbox.runOnce();
      done = true;
      await answering;
      expect(aborted()).toBe(false);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED' });
    } finally {
      done = true;
      await holds.release();
    }
    await inbox.close();
  });

  it('node-postgres: ends on the server the renewals it gave up on, never running more than two at once', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 12 }));
    try {
      const holds = await holdRenewals(t.db, 'ferry_inbox_receipts', 'all');
      const { inbox, started, reason } = untilLost(pgTransactions(pool));
      await inbox.accept(message({ consumer: 'held' }));
      const run = inbox.runOnce();
      let most = 0;
      try {
        await started;
        await waitFor(
          'the lease to be lost',
          async () => {
            most = Math.max(most, await holds.held());
            return reason() !== undefined;
          },
          30_000,
        );
        expect(reason()).toBeInstanceOf(InboxLeaseLostError);
        expect(await holds.sent()).toBeGreaterThan(RENEWALS_IN_FLIGHT_AT_MOST);
        await waitFor(
          'every renewal given up on to end on the server',
          async () => (await holds.held()) === 0,
        );
        expect(most).toBeLessThanOrEqual(RENEWALS_IN_FLIGHT_AT_MOST);
      } finally {
        await holds.release();
      }
      await run;
      await inbox.close();
    } finally {
      await pool.end();
    }
  });
});
