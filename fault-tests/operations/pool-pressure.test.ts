/**
 * Scenario: pool pressure on the application's Prisma client.
 *
 * Breaks: the application's client has a pool of 2 connections (pg `max: 2`,
 * `connectionTimeoutMillis: 1000`); two long application transactions occupy both while
 * messages arrive and the inbox worker polls.
 *
 * Invariant: acceptance fails as a whole with a retriable error (acceptMany throws
 * FERRY_DATABASE_UNAVAILABLE; nothing is reported accepted and nothing is stored), worker claims
 * fail (infrastructure-error 'claim') without consuming any attempt; once the pool is released
 * the redelivered batches are accepted and every message is processed exactly once.
 * Ledger: lost = 0, appliedTwice = 0, stuck = 0.
 */
import { Inbox, isFerryError, type InboxEvent } from '@ferry/core';
import { createTestDatabase, type TestDatabase, prismaFor } from '../../test-support/database';
import { assertLedger } from '../harness/ledger';
import {
  createBusinessTable,
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

describe('operations: pool-pressure', () => {
  let t: TestDatabase;
  const suite = faultSuite();
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('fails admission and claims while the pool is occupied, then accepts and processes everything once', async () => {
    const small = prismaFor(t.url, { max: 2, connectionTimeoutMillis: 1_000, idleTimeoutMillis: 10_000 });
    suite.defer(() => small.$disconnect());
    const events: InboxEvent[] = [];
    const inbox = new Inbox(small, {
      logger: quietLogger,
      observer: (event) => void events.push(event),
      handlers: { orders: async (_payload, context) => writeBusinessRow(context) },
      worker: {
        concurrency: 2,
        pollIntervalMs: 50,
        leaseMs: 3_000,
        heartbeatIntervalMs: 300,
        transactionTimeoutMs: 5_000,
        transactionMaxWaitMs: 1_000,
        retryBaseMs: 10,
        retryMaxMs: 100,
        shutdownTimeoutMs: 3_000,
      },
    });
    suite.defer(() => inbox.close());
    await inbox.initialize();
    const offering = newOffering();

    // Messages already stored (through another instance's client) before the pressure begins.
    const early = inputs('pp-early', 20);
    const other = new Inbox(t.prisma, { logger: quietLogger, handlers: { orders: async () => undefined } });
    await deliverUntilAcknowledged(other, early, offering);

    // Occupy both connections of the application's pool with long transactions.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = 0;
    const holders = [0, 1].map(() =>
      small.$transaction(
        async (tx) => {
          await tx.$executeRawUnsafe('SELECT 1');
          holding += 1;
          await released;
        },
        { timeout: 55_000, maxWait: 5_000 },
      ),
    );
    suite.defer(async () => {
      release();
      await Promise.allSettled(holders);
    });
    await waitFor('both pool connections held', () => holding === 2);

    // Admission under pressure: the batch fails as a whole, retriable, nothing stored.
    const late = inputs('pp-late', 20);
    const failure = await inbox.acceptMany(late.slice(0, 10)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isFerryError(failure, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
    expect((failure as { retriable: boolean }).retriable).toBe(true);
    offering.offered += 10;
    offering.failedBatches += 1;
    const [stored] = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE message_id LIKE 'pp-late-%'",
    );
    expect(stored!.n).toBe(0);

    // Claims under pressure fail and consume no attempt.
    inbox.start();
    await waitFor('a failed claim', () =>
      events.some((e) => e.type === 'infrastructure-error' && e.operation === 'claim'),
    );
    const [untouched] = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status = 'PENDING' AND attempts = 0",
    );
    expect(untouched!.n).toBe(early.length);

    // Redelivery keeps trying while the pool is occupied; release it and everything goes through.
    const redelivery = Promise.all([
      deliverUntilAcknowledged(inbox, late.slice(0, 10), offering, 40_000),
      deliverUntilAcknowledged(inbox, late.slice(10), offering, 40_000),
    ]);
    await waitFor('redelivery failing under pressure', () => offering.failedBatches >= 3);
    release();
    await Promise.all(holders);
    await redelivery;
    await waitUntilSettled(t);
    await inbox.close();

    const failedClaims = events.filter((e) => e.type === 'infrastructure-error' && e.operation === 'claim');
    process.stdout.write(
      `pool-pressure: failedAcceptBatches=${offering.failedBatches} failedClaims=${failedClaims.length} ` +
        `errors=${[...new Set(offering.errors)].join(',')}\n`,
    );
    const ledger = await inboxLedger(
      t,
      [...early, ...late].map((input) => input.messageId),
      offering,
    );
    assertLedger('pool-pressure', ledger);
    expect(ledger.accepted).toBe(early.length + late.length);
    expect(ledger.effectsApplied).toBe(early.length + late.length);
    expect(await t.db.query("SELECT id FROM ferry_inbox_receipts WHERE status <> 'COMPLETED'")).toEqual([]);
  });
});
