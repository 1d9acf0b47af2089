/**
 * Review 31: withSerializationRetry (sql/serializationRetry.ts, commit d887707) on a database whose
 * default_transaction_isolation is REPEATABLE READ.
 *
 * Defect: once PostgreSQL refused one of ferry's statements with 40001, every later statement of
 * the relay and of the inbox (acceptance, claims, leases, retries, DEAD) runs as
 * `db.transaction((tx) => tx.query(…), { isolation: 'read committed', timeoutMs, maxWaitMs })` on
 * the executor that withStatementDeadline wrapped. withStatementDeadline bounds statements only:
 * its `transaction` is passed through unbounded ("Transactions are not bounded here"), and the
 * adapters' own transaction deadline (fromPg's onConnection / transactionDeadline) stops counting
 * once the COMMIT is sent ("once it asked to commit, the outcome is PostgreSQL's"). So a COMMIT
 * whose answer never comes (a silent database, a network partition right after it left) is waited
 * for for ever: the relay's cycle and the inbox's acceptance never settle, with no FERRY_TIMEOUT
 * and no event. Before the first refusal the same statement, autocommitted, failed with a
 * retriable FERRY_TIMEOUT after statementTimeout.
 *
 * Contracts: relay option `statementTimeout` / inbox `statementTimeoutMs` bound each of ferry's
 * statements ("past the deadline ferry stops waiting and the statement fails with a retriable
 * FERRY_TIMEOUT", statementDeadline.ts; spec: every wait has a deadline); docs/inbox.md (d887707):
 * "that component's statements each run in a transaction started READ COMMITTED … at the cost of a
 * BEGIN and a COMMIT per statement" (a cost in round trips, not the loss of the deadline).
 *
 * Also here (each test says more): on Prisma the same READ COMMITTED transaction has no client-side
 * deadline at all, so a database gone silent in the middle of the statement is waited for for ever
 * too; and Prisma reports a deadlock (40P01) as TransactionWriteConflict / P2034, which
 * withSerializationRetry takes for a serialization failure, so on a database left at READ
 * COMMITTED one deadlock switches the inbox for good to a BEGIN and a COMMIT per statement (and to
 * the COMMIT without deadline), against "At READ COMMITTED nothing changes" (docs/inbox.md).
 *
 * Why it matters: on such a database every relay and inbox switches to this mode at the first
 * ordinary race, and stays in it; from then on one lost COMMIT answer stalls the relay (nothing
 * published any more, no error event, no health signal from a failure) or leaves a broker delivery
 * unacked and un-nacked for ever (the consumer's prefetch slot held).
 */
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createRelay, emit, fromPg, pgTransactions, type OutboxEvent, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../test-support/commitSwallowingProxy';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';
import { silent, waitFor } from './outbox/helpers';

let t: TestDatabase;
const pools: pg.Pool[] = [];
const proxies: CommitSwallowingProxy[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute(`ALTER DATABASE ${t.name} SET default_transaction_isolation = 'repeatable read'`);
});
afterAll(async () => {
  for (const proxy of proxies) proxy.close();
  await Promise.allSettled(pools.map((p) => p.end()));
  await t.drop();
});

async function proxiedPool(
  max = 4,
  url = t.url,
  isolation = 'repeatable read',
): Promise<{ pool: pg.Pool; proxy: CommitSwallowingProxy }> {
  const proxy = await commitSwallowingProxy();
  proxies.push(proxy);
  const pool = new pg.Pool({ connectionString: proxy.url(url), max });
  pool.on('error', () => undefined);
  // A connection left waiting for the swallowed COMMIT is ended by proxy.close() while checked out.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  pools.push(pool);
  const { rows } = await pool.query<{ transaction_isolation: string }>('SHOW transaction_isolation');
  if (rows[0]?.transaction_isolation !== isolation) throw new Error('database default not applied');
  return { pool, proxy };
}

/** A direct connection (not through the proxy) for the concurrent transaction. */
async function directClient(url = t.url): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Waits until some backend of this database waits on a lock (the statement meant to be refused). */
async function someoneWaitsOnLock(db = t.db): Promise<void> {
  await waitFor(async () => {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return (row?.n ?? 0) > 0;
  }, 10_000);
}

/** `promise`'s outcome, or 'still waiting' after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// User: a relay (fromPg on its own pool, statementTimeout 1 s) on a REPEATABLE READ database.
// A concurrent transaction updated an event's row while the relay published it: the relay's
// completion is refused (40001), so withSerializationRetry runs it again in a READ COMMITTED
// transaction; the network loses that transaction's COMMIT answer.
// Contract: the completion fails with FERRY_TIMEOUT after statementTimeout, the relay reports it
// and goes on (the next event is published).
// Instead: the relay waits for the COMMIT answer for ever: no error event, nothing published.
it('a relay whose READ COMMITTED completion loses its COMMIT answer fails it within statementTimeout and goes on', async () => {
  const { pool, proxy } = await proxiedPool();
  const first = await emit(t.db, { type: 'first', payload: {} });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const publisher = new InMemoryPublisher({
    decide: async (m) => {
      if (m.id === first.id) await gate;
      return 'sent' as const;
    },
  });
  const events: OutboxEvent[] = [];
  const relay: Relay = createRelay({
    db: fromPg(pool),
    publisher,
    logger: silent,
    observer: (e) => void events.push(e),
    options: { pollInterval: 50, statementTimeout: 1_000 },
  });
  const concurrent = await directClient();
  relay.start();
  try {
    await waitFor(() => publisher.attempts.some((m) => m.id === first.id), 10_000);
    // The concurrent transaction (an operator's fix, a migration backfill) holds the row.
    await concurrent.query('BEGIN');
    await concurrent.query(`UPDATE outbox_events SET updated_at = now() WHERE id = $1::uuid`, [first.id]);
    release();
    await someoneWaitsOnLock(); // the relay's completion, at REPEATABLE READ
    proxy.arm(); // the next COMMIT's answer is lost: the completion run again at READ COMMITTED
    await concurrent.query('COMMIT'); // the completion is refused: 40001
    await waitFor(() => proxy.swallowed(), 10_000);
    const second = await emit(t.db, { type: 'second', payload: {} });
    const published = await waitFor(() => publisher.delivered.some((m) => m.id === second.id), 15_000).then(
      () => 'published',
      () => 'not published',
    );
    const failures = events.filter((e) => e.type === 'infrastructure-error').map((e) => e.error);
    expect({ published, timedOut: failures.some((f) => /FERRY_TIMEOUT|did not/.test(f)) }).toEqual({
      published: 'published',
      timedOut: true,
    });
  } finally {
    await concurrent.end().catch(() => undefined);
    proxy.close(); // unblocks a relay stuck on the swallowed COMMIT
    await within(relay.close(), 10_000);
  }
});

// User: an inbox on node-postgres (pgTransactions, statementTimeoutMs 1 s) accepting a broker
// redelivery while a concurrent transaction holds the stored receipt's row: the acceptance is
// refused (40001) and run again in a READ COMMITTED transaction whose COMMIT answer is lost.
// Contract: acceptMany settles within its statement deadline (a retriable failure: the transport
// nacks / redelivers).
// Instead: acceptMany never settles.
it('an acceptance run again at READ COMMITTED whose COMMIT answer is lost settles within statementTimeoutMs (pgTransactions)', async () => {
  const { pool, proxy } = await proxiedPool();
  const inbox = makeInbox(pgTransactions(pool), {
    statementTimeoutMs: 1_000,
    handlers: { orders: async () => undefined },
  });
  await acceptRacing(proxy, (delivery) => inbox.acceptMany([delivery]));
});

// The same on Prisma (a Prisma client over the same kind of pool): Prisma's interactive
// transaction `timeout` does not cover a COMMIT whose answer never comes either.
it('an acceptance run again at READ COMMITTED whose COMMIT answer is lost settles within statementTimeoutMs (Prisma)', async () => {
  const { pool, proxy } = await proxiedPool();
  const prisma = prismaOnPool(pool);
  try {
    const inbox = makeInbox(prisma, {
      statementTimeoutMs: 1_000,
      handlers: { orders: async () => undefined },
    });
    await acceptRacing(proxy, (delivery) => inbox.acceptMany([delivery]));
  } finally {
    await within(prisma.$disconnect(), 5_000);
  }
});

// The same on Kysely (kyselyTransactions): its transaction deadline is cleared before Kysely's COMMIT.
it('an acceptance run again at READ COMMITTED whose COMMIT answer is lost settles within statementTimeoutMs (Kysely)', async () => {
  const { pool, proxy } = await proxiedPool();
  const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const inbox = makeInbox(kyselyTransactions(kysely), {
    statementTimeoutMs: 1_000,
    handlers: { orders: async () => undefined },
  });
  await acceptRacing(proxy, (delivery) => inbox.acceptMany([delivery]));
});

async function acceptRacing(
  proxy: CommitSwallowingProxy,
  accept: (delivery: ReturnType<typeof message>) => Promise<unknown>,
): Promise<void> {
  const delivery = message({ consumer: 'orders', tenantId: 'acme' });
  await accept(delivery); // the original delivery, stored
  const concurrent = await directClient();
  try {
    await concurrent.query('BEGIN');
    await concurrent.query(
      `UPDATE ferry_inbox_receipts SET updated_at = now() WHERE consumer = 'orders' AND message_id = $1`,
      [delivery.messageId],
    );
    const redelivery = accept(delivery).then(
      (value) => ({ settled: 'answered', value }),
      (error: unknown) => ({ settled: 'failed', error: String(error) }),
    );
    await someoneWaitsOnLock(); // the acceptance's ON CONFLICT DO NOTHING, at REPEATABLE READ
    proxy.arm();
    await concurrent.query('COMMIT'); // the acceptance is refused: 40001, run again at READ COMMITTED
    await waitFor(() => proxy.swallowed(), 10_000);
    // Deadline 1 s; 15 s is far beyond it, its grace and the retries' backoff.
    const outcome = await within(redelivery, 15_000);
    expect(outcome).not.toBe('still waiting');
  } finally {
    await concurrent.end().catch(() => undefined);
    proxy.close();
  }
}

// User: an inbox on Prisma on a database left at READ COMMITTED (PostgreSQL's default). Once, an
// acceptance deadlocked with a concurrent transaction (40P01) and was run again, as documented.
// Contract: docs/inbox.md "At READ COMMITTED nothing changes"; serializationRetry.ts "At READ
// COMMITTED nothing changes and nothing costs more"; "a deadlock (40P01) is run again the same way
// it ran".
// Instead: Prisma's driver adapter reports 40P01 as kind TransactionWriteConflict / P2034, which
// refusalOf takes for a serialization failure (SERIALIZATION_CODES): the inbox switches for good to
// a BEGIN … COMMIT per statement, and with it inherits the COMMIT without deadline above: a later
// acceptance whose COMMIT answer is lost never settles, where an autocommitted statement (no
// COMMIT to lose) is answered.
it('after one deadlock on a READ COMMITTED database, a Prisma inbox still sends its statements alone (no COMMIT to lose)', async () => {
  const rc = await createTestDatabase();
  try {
    const { pool, proxy } = await proxiedPool(4, rc.url, 'read committed');
    const prisma = prismaOnPool(pool);
    try {
      const inbox = makeInbox(prisma, { handlers: { orders: async () => undefined } });
      const stored = message({ consumer: 'orders', tenantId: 'acme', messageId: `b-${Date.now()}` });
      const fresh = message({ consumer: 'orders', tenantId: 'acme', messageId: `a-${Date.now()}` });
      await inbox.acceptMany([stored]);
      const commitsBefore = proxy.commits();
      // The deadlock: the concurrent transaction holds `stored`'s row, the acceptance of [fresh,
      // stored] inserts `fresh` (identity order) and waits for it; the concurrent transaction then
      // inserts `fresh` too. Its own deadlock_timeout is long, so the acceptance is the one refused.
      const concurrent = await directClient(rc.url);
      try {
        await concurrent.query(`SET deadlock_timeout = '60s'`);
        await concurrent.query('BEGIN');
        await concurrent.query(`UPDATE ferry_inbox_receipts SET updated_at = now() WHERE message_id = $1`, [
          stored.messageId,
        ]);
        const racing = inbox.acceptMany([fresh, stored]);
        racing.catch(() => undefined);
        await someoneWaitsOnLock(rc.db);
        const inserting = concurrent
          .query(
            `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint, payload_bytes, max_attempts)
             VALUES ('acme', 'orders', $1, '{}', 'x', 2, 5)`,
            [fresh.messageId],
          )
          .then(() => 'inserted');
        expect(await within(inserting, 15_000)).toBe('inserted'); // the acceptance was refused: 40P01
        await concurrent.query('ROLLBACK'); // the acceptance, run again, goes through
        const answered = await within(racing, 15_000);
        expect(answered === 'still waiting' ? answered : answered.map((r) => r.kind)).toEqual([
          'accepted',
          'duplicate',
        ]);
      } finally {
        await concurrent.end().catch(() => undefined);
      }
      // A later acceptance; the network loses the answer of a COMMIT, if one is sent.
      const commitsAfterDeadlock = proxy.commits();
      proxy.arm();
      const later = await within(
        inbox.acceptMany([message({ consumer: 'orders', tenantId: 'acme' })]).then(
          (results) => results.map((r) => r.kind),
          (error: unknown) => String(error),
        ),
        15_000,
      );
      expect({ before: commitsBefore, later }).toEqual({ before: 0, later: ['accepted'] });
      expect({ commitsSinceDeadlock: proxy.commits() - commitsAfterDeadlock }).toEqual({
        commitsSinceDeadlock: 0,
      });
    } finally {
      proxy.close();
      await within(prisma.$disconnect(), 5_000);
    }
  } finally {
    await rc.drop();
  }
});

// User: an inbox on Prisma (statementTimeoutMs 1 s) on a REPEATABLE READ database, switched to
// READ COMMITTED transactions by one refused acceptance; then the database goes silent in the
// middle of an acceptance (a network blackhole). Contract: the acceptance fails within its
// statement deadline (a retriable FERRY_TIMEOUT), as it did before the switch. Instead: ferry sets
// no deadline of its own on the Prisma transaction the statement now runs in
// (serializationRetry.ts passes it through withStatementDeadline's unbounded `transaction`;
// interactiveTransaction only hands Prisma its `timeout`), and Prisma's timeout does not end a
// query PostgreSQL never answers: acceptMany never settles.
it('a Prisma acceptance at READ COMMITTED on a database gone silent mid-statement settles within statementTimeoutMs', async () => {
  const proxy = await halfOpenProxy(new URL(t.url));
  const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 4 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => void client.on('error', () => undefined));
  pools.push(pool);
  const prisma = prismaOnPool(pool);
  try {
    const inbox = makeInbox(prisma, {
      statementTimeoutMs: 1_000,
      handlers: { orders: async () => undefined },
    });
    // One refused acceptance (40001) switches the inbox to READ COMMITTED transactions.
    const delivery = message({ consumer: 'orders', tenantId: 'acme' });
    await inbox.acceptMany([delivery]);
    const concurrent = await directClient();
    try {
      await concurrent.query('BEGIN');
      await concurrent.query(
        `UPDATE ferry_inbox_receipts SET updated_at = now() WHERE consumer = 'orders' AND message_id = $1`,
        [delivery.messageId],
      );
      const redelivery = inbox.acceptMany([delivery]);
      await someoneWaitsOnLock();
      await concurrent.query('COMMIT');
      expect((await redelivery).map((r) => r.kind)).toEqual(['duplicate']);
    } finally {
      await concurrent.end().catch(() => undefined);
    }
    proxy.silenceOn('ON CONFLICT (scope, consumer, message_id) DO NOTHING');
    const silent = await within(
      inbox.acceptMany([message({ consumer: 'orders', tenantId: 'acme' })]).then(
        () => 'answered',
        (error: unknown) => String(error),
      ),
      15_000,
    );
    expect(silent).not.toBe('still waiting');
  } finally {
    proxy.close();
    await within(prisma.$disconnect(), 5_000);
  }
});
