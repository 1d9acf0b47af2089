/**
 * Scenario: a slow database, alive but late: the partial failure between healthy and gone.
 *
 * Breaks: messages are accepted (acceptMany) and handled by the inbox worker (concurrency 4, each
 * handler writes a business row and emits an outbox event in context.tx) while an outbox relay
 * publishes the events to an in-memory broker; all of it on the application's Prisma client,
 * whose pg pool reaches PostgreSQL through the TCP proxy. Then the proxy holds every chunk 600 ms
 * each way (`setDelay`): every round trip takes over a second, more than twice the leases'
 * heartbeat interval (500 ms, lease 3 s), so each renewal misses its deadline and answers late.
 * Traffic goes on through the slow phase until its acceptance is done and the leases have sent
 * 80 renewals through it (several lease intervals), some lease having two in flight at once;
 * then the delay goes back to 0 and more messages follow.
 *
 * Invariant: nothing lost, nothing applied twice, nothing stuck after recovery: every message
 * COMPLETED with exactly one business row, one committed outbox event each, SENT and delivered
 * (broker repeats absorbed). Ledgers slow-database and slow-database/outbox: lost = 0,
 * appliedTwice = 0, stuck = 0. No receipt charged more than one attempt no handler used
 * (lifetime_attempts never above the handler's calls + 1: the one race left, a crash's, at the
 * end of the test), none DEAD. And the lease kit's bound holds end to end: at most
 * RENEWALS_IN_FLIGHT_AT_MOST (2) renewal statements of one lease (one receipt's claim, one queued
 * claim, one relay batch's token) run at once on the application's connections, counted from the
 * driver (a wrapped pg client: from the statement's send to its answer, whose bytes mostly wait
 * in the proxy). PostgreSQL's own view (pg_stat_activity, sampled on a direct connection) is
 * printed beside it, not asserted: the server runs a renewal in a millisecond and cannot tell
 * which lease a statement renews (its parameters are not shown).
 *
 * What it found (fixed): a claim the worker's queue hands to a lane starts its own lease from the
 * queue lease's last proof (claimQueue take(): provenAt), not crediting the queue's renewal in
 * flight, and its first renewal answers a round trip later, past that proof's local expiry: the
 * lease is lost before the handler starts (renewals answered rows=1 meanwhile); the give-back then
 * reached the database after the lease ran out there (releaseClaims fenced on an unexpired lease),
 * and a claim check or renewal that found the lease run out reported it lease-lost and left it, so
 * the attempt stayed charged and the claim was reclaimed as abandoned (3-13 receipts a run). Now a
 * claim still under its token is given back uncharged, its lease run out or not (releaseClaims,
 * process.ts giveBackIfHeld). The early loss at the handoff itself: the lane's lease is now also
 * proven by the queue renewal in flight at the handoff (ClaimQueue.take, QueuedClaim.proofs).
 */
import { Pool, type PoolClient } from 'pg';
import {
  createRelay,
  fromPrisma,
  Inbox,
  type InboxAcceptInput,
  type InboxEvent,
  type OutboxEvent,
  type SqlExecutor,
} from '@ferry/core';
import { prismaOnPool } from '../../test-support/database';
import { RENEWAL_TEXT } from '../../test-support/heldRenewals';
import { assertLedger } from '../harness/ledger';
import { emitHandledEvent, OutboxSide } from '../database/outboxSide';
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

const BATCH = 4;
/** Messages offered before, during and after the slow phase. */
const BEFORE = 8;
const DURING = 16;
const AFTER = 8;
const DELAY_MS = 600;
/** Renewal statements the slow phase lasts for (about eight a second at 600 ms). */
const SLOW_RENEWALS = 80;
/** What the lease kit allows (packages/core/src/lease/heartbeat.ts, RENEWALS_IN_FLIGHT_AT_MOST). */
const RENEWALS_OF_ONE_LEASE_AT_MOST = 2;

describe('operations: slow-database', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('loses, repeats and strands nothing, and never runs more than two renewals of one lease at once', async () => {
    const { t, proxy } = fixture;
    const renewals = new RenewalsOnTheWire();
    // The application's pool, through the proxy; room for every lease's two renewals beside the
    // handlers' transactions, so the pool does not hide a third renewal by queueing it.
    const pool = new Pool({
      connectionString: proxy.urlFor(t.url),
      max: 24,
      connectionTimeoutMillis: 10_000,
      query_timeout: 15_000,
      idleTimeoutMillis: 10_000,
    });
    pool.on('connect', (client) => renewals.watch(client));
    pool.on('error', () => undefined);
    suite.defer(() => pool.end());
    const prisma = prismaOnPool(pool);
    suite.defer(() => prisma.$disconnect());

    const events: InboxEvent[] = [];
    const handlerCalls = new Map<string, number>();
    let handlerStarts = 0;
    const inbox = new Inbox(prisma, {
      logger: quietLogger,
      observer: (event) => void events.push(event),
      handlers: {
        orders: async (_payload, context) => {
          handlerStarts += 1;
          handlerCalls.set(context.messageId, (handlerCalls.get(context.messageId) ?? 0) + 1);
          await writeBusinessRow(context);
          await emitHandledEvent(context);
        },
      },
      worker: {
        concurrency: 4,
        pollIntervalMs: 50,
        leaseMs: 3_000,
        heartbeatIntervalMs: 500,
        // A handler transaction is some seven round trips: over eight seconds in the slow phase.
        transactionTimeoutMs: 30_000,
        transactionMaxWaitMs: 10_000,
        retryBaseMs: 10,
        retryMaxMs: 100,
        shutdownTimeoutMs: 5_000,
      },
    });
    suite.defer(() => inbox.close());
    const outbox = new OutboxSide();
    const relayEvents: OutboxEvent[] = [];
    const relay = createRelay({
      db: fromPrisma(prisma),
      publisher: outbox.broker,
      logger: quietLogger,
      observer: (event) => void relayEvents.push(event),
      options: {
        pollInterval: 50,
        batchSize: 10,
        lease: { duration: 3_000, heartbeatInterval: 500 },
        retry: { initialDelay: 10, maxDelay: 100 },
      },
    });
    suite.defer(() => relay.close());
    await inbox.initialize();
    inbox.start();
    relay.start();

    const offering = newOffering();
    const before = inputs('sd-before', BEFORE);
    const during = inputs('sd-during', DURING);
    const after = inputs('sd-after', AFTER);
    const completed = (): number => events.filter((e) => e.type === 'completed').length;
    const offer = async (messages: readonly InboxAcceptInput[]): Promise<void> => {
      for (let i = 0; i < messages.length; i += BATCH) {
        await deliverUntilAcknowledged(inbox, messages.slice(i, i + BATCH), offering, 60_000);
      }
    };

    await offer(before);
    await waitFor('the first messages completed', () => completed() >= BEFORE / 2);

    // Slow phase: every chunk held DELAY_MS each way, traffic going on; PostgreSQL's own view
    // sampled on a direct connection meanwhile.
    proxy.setDelay(DELAY_MS);
    const completedBeforeSlow = completed();
    const startsBeforeSlow = handlerStarts;
    const server = sampleServerRenewals(t.db);
    suite.defer(() => server.stop());
    let slowOffered = false;
    const slowTraffic = offer(during).finally(() => (slowOffered = true));
    // The slow phase lasts as long as its acceptance, handlers and the relay working meanwhile,
    // and until the leases sent SLOW_RENEWALS renewals through it (several lease intervals of
    // the four lanes' and the queue's leases), some lease having two in flight at once.
    const renewalsBeforeSlow = renewals.statements;
    await waitFor(
      'the slow phase to carry its acceptance and renewals, some answered late',
      () =>
        slowOffered &&
        renewals.statements - renewalsBeforeSlow >= SLOW_RENEWALS &&
        renewals.mostOfOneLease >= RENEWALS_OF_ONE_LEASE_AT_MOST,
      90_000,
      50,
    );
    const slowCompletions = completed() - completedBeforeSlow;
    const slowHandlerStarts = handlerStarts - startsBeforeSlow;
    proxy.setDelay(0);
    const serverView = await server.stop();

    await slowTraffic;
    await offer(after);
    await waitUntilSettled(t, 60_000);
    await waitFor('every outbox event SENT', () => outbox.allSent(t.prisma), 60_000, 100);
    await inbox.close();
    await relay.close();

    const offeredIds = [...before, ...during, ...after].map((input) => input.messageId);
    const total = offeredIds.length;
    const infrastructure = countBy(
      [...events, ...relayEvents].flatMap((e) => (e.type === 'infrastructure-error' ? [e.operation] : [])),
    );
    process.stdout.write(
      `slow-database: delayMs=${DELAY_MS} slowHandlerStarts=${slowHandlerStarts} slowCompletions=${slowCompletions} ` +
        `renewalStatements=${renewals.statements} leasesRenewed=${renewals.leases} ` +
        `mostRenewalsOfOneLeaseAtOnce=${renewals.mostOfOneLease} (${renewals.mostLease}) ` +
        `leasesWithTwoAtOnce=${renewals.leasesAtTwo} ` +
        `serverMostRenewalsActiveAtOnce(all leases)=${serverView.most} serverSamples=${serverView.samples} ` +
        `inboxLeasesLost=${events.filter((e) => e.type === 'lease-lost').length} ` +
        `relayLeasesLost=${relayEvents.filter((e) => e.type === 'lease-lost').length} ` +
        `failedAcceptBatches=${offering.failedBatches} retries=${events.filter((e) => e.type === 'retry').length} ` +
        `infrastructureErrors=${JSON.stringify(infrastructure)} proxyConnections=${proxy.accepted}\n`,
    );

    // The bound, end to end: never a third renewal of one lease on the wire.
    expect(renewals.mostOfOneLease).toBeLessThanOrEqual(RENEWALS_OF_ONE_LEASE_AT_MOST);
    await waitFor('every renewal statement answered', () => renewals.running === 0, 30_000);

    const ledger = await inboxLedger(t, offeredIds, offering);
    assertLedger('slow-database', ledger);
    expect(ledger.accepted).toBe(total);
    expect(ledger.effectsApplied).toBe(total);
    expect(await t.db.query("SELECT id FROM ferry_inbox_receipts WHERE status <> 'COMPLETED'")).toEqual([]);

    // Outbox side (database/outboxSide.ts's ledger, read directly): one committed event per
    // message, SENT and delivered (repeats absorbed).
    const outboxLedger = await outbox.ledger(t.prisma, offeredIds);
    assertLedger('slow-database/outbox', outboxLedger);
    expect(outboxLedger.accepted).toBe(total);

    // A claim whose handler never ran is given back uncharged (releaseClaims under its token, its
    // lease run out or not). One race is left, a crash's: the lease is counted lost locally one
    // heartbeat interval before it runs out on the database, and a give-back slower than that
    // (each way 600 ms here, the interval 500) can arrive after the worker's own next claim
    // recovered the row as abandoned, which counts the attempt as a crash would. So a receipt may
    // carry one attempt no handler used, never more (before the fix: up to four, 3-13 receipts a
    // run), and none is DEAD.
    const attempts = await t.db.query<{ message_id: string; lifetime_attempts: number; status: string }>(
      'SELECT message_id, lifetime_attempts, status FROM ferry_inbox_receipts',
    );
    const counted = attempts.map((row) => ({ ...row, handlerCalls: handlerCalls.get(row.message_id) ?? 0 }));
    const unused = counted.filter((row) => row.lifetime_attempts > row.handlerCalls);
    process.stdout.write(`slow-database: receipts charged an attempt no handler used=${unused.length}\n`);
    expect(counted.filter((row) => row.lifetime_attempts > row.handlerCalls + 1)).toEqual([]);
    expect(counted.filter((row) => row.status !== 'COMPLETED')).toEqual([]);
  }, 180_000);
});

/**
 * Lease renewal statements on the application's pg connections, per lease, counted from the
 * driver: from the call that sends one to its answer (or failure). A renewal the kit counts in
 * flight while it waits for a pooled connection is not counted here, so this count is never above
 * the kit's. Each lease by what its statement names: a receipt's id and claim token (inbox
 * renewLease), each queued claim's id and token (renewQueued: one statement renews every queued
 * claim of a batch), a relay batch's token (outbox renewLease).
 */
class RenewalsOnTheWire {
  private readonly inFlight = new Map<string, number>();
  private readonly seen = new Set<string>();
  private readonly twice = new Set<string>();
  statements = 0;
  running = 0;
  mostOfOneLease = 0;
  mostLease = '';

  get leases(): number {
    return this.seen.size;
  }

  get leasesAtTwo(): number {
    return this.twice.size;
  }

  watch(client: PoolClient): void {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]): unknown => {
      const keys = leaseKeys(args);
      if (keys.length === 0) return query(...args);
      const end = this.start(keys);
      const callback = args.findIndex((arg) => typeof arg === 'function');
      if (callback >= 0) {
        const done = args[callback] as (...results: unknown[]) => unknown;
        args[callback] = (...results: unknown[]) => {
          end();
          return done(...results);
        };
        return query(...args);
      }
      const answer = query(...args);
      if (answer instanceof Promise) answer.then(end, end);
      else end();
      return answer;
    };
  }

  private start(keys: readonly string[]): () => void {
    this.statements += 1;
    this.running += 1;
    for (const key of keys) {
      this.seen.add(key);
      const now = (this.inFlight.get(key) ?? 0) + 1;
      this.inFlight.set(key, now);
      if (now >= 2) this.twice.add(key);
      if (now > this.mostOfOneLease) {
        this.mostOfOneLease = now;
        this.mostLease = key;
      }
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running -= 1;
      for (const key of keys) this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
    };
  }
}

/** The leases a pg query call renews, from its text and values: none for any other statement. */
function leaseKeys(args: readonly unknown[]): string[] {
  const config = args[0] as string | { text?: string; values?: unknown[] } | undefined;
  const text = typeof config === 'string' ? config : config?.text;
  if (typeof text !== 'string' || !text.includes(RENEWAL_TEXT)) return [];
  const values = (Array.isArray(args[1]) ? args[1] : typeof config === 'object' ? config.values : []) ?? [];
  if (text.includes('outbox_events')) return [`relay batch ${String(values[0])}`];
  if (text.includes('AS r SET')) {
    const ids = pgArray(values[0]);
    const tokens = pgArray(values[1]);
    return ids.map((id, i) => `queued claim ${id}/${tokens[i]}`);
  }
  return [`receipt ${String(values[0])}/${String(values[1])}`];
}

/** A text[] parameter as the driver was given it: an array, or its literal. */
function pgArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  return String(value)
    .replace(/^\{|\}$/g, '')
    .split(',');
}

/**
 * Samples, on a direct connection (not through the proxy), how many renewal statements
 * PostgreSQL is running at once, over every lease (it cannot tell leases apart), until stop().
 */
function sampleServerRenewals(db: SqlExecutor): {
  stop(): Promise<{ most: number; samples: number }>;
} {
  let stopped = false;
  let most = 0;
  let samples = 0;
  const loop = (async () => {
    while (!stopped) {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND strpos(query, $1) > 0`,
        [RENEWAL_TEXT],
      );
      samples += 1;
      most = Math.max(most, Number(row?.n ?? 0));
      await new Promise((resolve) => setTimeout(resolve, 20)); // sampling period, not a wait on an outcome
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { most, samples };
    },
  };
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
