/**
 * Review 105 (health during an outage of the application's pool): the handler transactions get no
 * session (the pool points at a database that does not exist, or is held busy past
 * transactionMaxWaitMs) while ferry's own statements, on another pool, work.
 *
 * What happened on main: createHealth said nothing: the poll loop claims (liveness up), ferry's
 * database answers (readiness up), and details() was up too until the backlog grew past its age
 * threshold (5 min by default); only the infrastructure-error events and warnings showed it.
 * What should happen: details() reports the outage (a down `inbox handler transactions` check
 * saying since when and why) once it has lasted longer than maxCycleAgeMs, and up again once a
 * handler transaction began. Liveness and readiness stay up: restarting the process would not
 * bring the pool back, and a readiness that flapped with the application's pool would take every
 * pod out of its load balancer at once.
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createHealth, fromPg, pgTransactions, type HealthCheck, type TransactionAdapter } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { busyApplicationPool, makeInbox, message, waitFor } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('TRUNCATE ferry_inbox_receipts');
});

const MAX_CYCLE_AGE_MS = 300;
const WORKER = { concurrency: 1, retryBaseMs: 20, retryMaxMs: 100 };
/** A pool held busy: no connection within this. */
const BUSY_WORKER = { ...WORKER, transactionMaxWaitMs: 100 };
const CHECK = 'inbox handler transactions';

function missingDatabaseUrl(): string {
  const url = new URL(t.url);
  url.pathname = '/ferry_review105_missing';
  return url.toString();
}

/**
 * Liveness and readiness as `name:status` (with the default maxCycleAgeMs: a loop slowed by a
 * loaded machine is not what this is about; neither reads the outage whatever the bound), and
 * details (bound MAX_CYCLE_AGE_MS).
 */
async function healthOf(inbox: Parameters<typeof createHealth>[0]['inbox']) {
  const health = createHealth({ db: t.db, inbox });
  const short = createHealth({ db: t.db, inbox, maxCycleAgeMs: MAX_CYCLE_AGE_MS });
  const names = (checks: readonly HealthCheck[]) => checks.map((c) => `${c.name}:${c.status}`);
  const [live, ready, details] = await Promise.all([health.liveness(), health.readiness(), short.details()]);
  return {
    live: names(live.checks),
    ready: ready.status,
    // What details report down, but the loop's check (its short bound may catch a slow cycle).
    down: details.checks.filter((c) => c.status === 'down' && c.name !== 'inbox worker').map((c) => c.name),
    outage: details.checks.find((check) => check.name === CHECK),
  };
}

/** An inbox on `adapter` with one receipt, started; resolves once details report the outage. */
async function inOutage(adapter: TransactionAdapter<PoolClient>, worker: typeof WORKER) {
  const inbox = makeInbox(adapter, { worker, handlers: { orders: async () => undefined } as never });
  await inbox.accept(message());
  inbox.start();
  const during = await waitFor('details to report the outage', async () => {
    const seen = await healthOf(inbox);
    return seen.outage?.status === 'down' && seen;
  });
  return { inbox, during };
}

/** Resolves once details report no outage. */
function outageOver(inbox: Parameters<typeof createHealth>[0]['inbox']) {
  return waitFor('details to report the outage over', async () => {
    const seen = await healthOf(inbox);
    return seen.outage?.status === 'up' && seen;
  });
}

describe('an outage of the application pool in health', () => {
  it('a database that does not exist: details down once it lasted past maxCycleAgeMs, up once a session began', async () => {
    const missing = listened(new Pool({ connectionString: missingDatabaseUrl(), max: 1 }));
    const appPool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const refused = pgTransactions(missing);
    const real = pgTransactions(appPool);
    let down = true;
    const adapter: TransactionAdapter<PoolClient> = {
      ...real,
      db: fromPg(ferryPool),
      transaction: (work, options) => (down ? refused : real).transaction(work, options),
    };
    try {
      const { inbox, during } = await inOutage(adapter, WORKER);
      expect(during).toEqual({
        live: ['inbox worker:up'],
        ready: 'up',
        down: [CHECK],
        outage: {
          name: CHECK,
          status: 'down',
          detail: expect.stringMatching(
            /^no session for a handler transaction in \d+ ms \(bound 300; since [^)]*claims given back[^)]*\): .*database "ferry_review105_missing" does not exist/,
          ),
        },
      });
      expect(inbox.sessionOutage).toMatchObject({
        since: expect.any(Date),
        transactions: expect.any(Number),
      });
      down = false;
      const after = await outageOver(inbox);
      expect(after).toEqual({
        live: ['inbox worker:up'],
        ready: 'up',
        down: [],
        outage: { name: CHECK, status: 'up', detail: 'no outage' },
      });
      expect(inbox.sessionOutage).toBeNull();
      await inbox.close();
    } finally {
      await missing.end();
      await appPool.end();
      await ferryPool.end();
    }
  });

  it('a pool held busy past transactionMaxWaitMs: details down, up once it lends a connection again', async () => {
    const app = await busyApplicationPool(t);
    try {
      const { inbox, during } = await inOutage(app.adapter, BUSY_WORKER);
      expect({ live: during.live, ready: during.ready, down: during.down }).toEqual({
        live: ['inbox worker:up'],
        ready: 'up',
        down: [CHECK],
      });
      app.free();
      expect((await outageOver(inbox)).down).toEqual([]);
      await inbox.close();
    } finally {
      await app.end();
    }
  });

  it('a worker switched off (acceptance only) has no such check', async () => {
    const app = await busyApplicationPool(t);
    try {
      const inbox = makeInbox(app.adapter, { handlers: { orders: async () => undefined } as never });
      expect((await healthOf(inbox)).outage).toBeUndefined();
    } finally {
      await app.end();
    }
  });
});
