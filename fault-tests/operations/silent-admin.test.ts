/**
 * Scenario: PostgreSQL goes silent under the operator side of ferry (admin APIs, health checks,
 * the metrics stats read, the CLI) and the application set NO driver timeouts.
 *
 * Breaks: the admins (outbox operator and tenant scope, inbox tenant scope, privileged
 * cross-tenant) run on a pool that already holds connections through the TCP proxy; the proxy
 * turns into a blackhole; every kind of call is made (plain reads, and audited mutations, which
 * run in a transaction). Then the proxy passes again; on a plain pg pool the connections that
 * lived through the blackhole stay half-open for good (`keepDamaged`).
 *
 * Invariant: every admin call in the blackhole fails typed and retriable within its
 * `statementTimeoutMs` (FERRY_TIMEOUT, or FERRY_DATABASE_UNAVAILABLE when no connection is had
 * in time), transactions included; after the heal each call answers again (on pg although its
 * pool's connections are half-open: ferry destroyed those it gave up on). A readiness probe that
 * gave up destroys its connection too, so a small pool recovers after the heal instead of being
 * held for good by probes that never answer. A metrics scrape reports the last values while the
 * database is silent, and the gauges move again after the heal (a stats read stuck on a half-open
 * connection would otherwise block every later read). The CLI's statement that lost its answer
 * ends with FERRY_TIMEOUT (exit 1) within `--statement-timeout` / FERRY_STATEMENT_TIMEOUT.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  createHealth,
  createOutboxAdmin,
  emit,
  fromPg,
  fromPrisma,
  InboxAdmin,
  InboxPrivilegedAdmin,
  isFerryError,
  type ApplicationTransaction,
  type SqlExecutor,
} from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { runCli } from '@ferry/cli';
import { prismaFor } from '../../test-support/database';
import { faultSuite } from '../harness/scaffold';
import { proxiedDatabase, track, waitFor } from './support';

/** The admins' own bound (no driver timeouts anywhere). */
const STATEMENT_TIMEOUT_MS = 500;
/** Far above every bound under test: a call still waiting then is a hang. */
const SETTLE_MS = 15_000;

type Kind = 'prisma' | 'pg';

function applicationClient(
  kind: Kind,
  url: string,
): { app: ApplicationTransaction; db: SqlExecutor; end(): Promise<void> } {
  if (kind === 'prisma') {
    const prisma = prismaFor(url);
    return { app: prisma, db: fromPrisma(prisma), end: () => prisma.$disconnect() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined); // a reset idle connection is the proxy's doing
  return { app: pool, db: fromPg(pool), end: () => pool.end() };
}

/** FERRY_TIMEOUT or FERRY_DATABASE_UNAVAILABLE, retriable: what a silent database may answer. */
function expectSilenceError(what: string, error: unknown): void {
  const typed = isFerryError(error, 'FERRY_TIMEOUT') || isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE');
  if (!typed)
    throw new Error(`${what}: expected FERRY_TIMEOUT / FERRY_DATABASE_UNAVAILABLE, got ${String(error)}`);
  expect((error as { retriable: boolean }).retriable).toBe(true);
}

describe.each<Kind>(['prisma', 'pg'])('operations: silent-admin (%s, no driver timeouts)', (kind) => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('bounds every admin call, transactions included, and answers again after the heal', async () => {
    const { t, proxy } = fixture;
    await proxy.setMode('pass');
    const client = applicationClient(kind, proxy.urlFor(t.url));
    suite.defer(() => client.end());
    suite.defer(() => proxy.resetAll()); // ends the half-open connections before the pool is ended
    await emit(t.db, { type: 'silent.admin', payload: {}, tenantId: 'acme' });
    const [event] = await t.db.query<{ id: string }>('SELECT id FROM outbox_events LIMIT 1');
    const options = { statementTimeoutMs: STATEMENT_TIMEOUT_MS };
    const outbox = createOutboxAdmin(client.db, options);
    const inbox = new InboxAdmin(client.app, options).forTenant('acme');
    const privileged = new InboxPrivilegedAdmin(client.app, { ...options, privilegedAdmin: true });
    const requeue = { id: randomUUID(), expectedVersion: 1, reason: 'silent', actor: 'test' };
    /** Each resolves with what the database said; a typed refusal (not found, conflict) is an answer. */
    const calls: Record<string, () => Promise<unknown>> = {
      'outbox stats': () => outbox.stats(),
      'outbox list': () => outbox.forTenant('acme').list(),
      'outbox retry (transaction)': () => outbox.forTenant('acme').retry(event!.id),
      'inbox stats': () => inbox.stats(),
      'inbox requeue (transaction)': () =>
        inbox.requeue(requeue).catch((error: unknown) => {
          if (isFerryError(error, 'FERRY_NOT_FOUND')) return 'not found';
          throw error;
        }),
      'privileged list': () => privileged.list(),
    };
    for (const call of Object.values(calls)) await call(); // the pool holds connections now

    await proxy.setMode('blackhole');
    const pending = Object.entries(calls).map(([name, call]) => [name, track(call())] as const);
    for (const [name, call] of pending) {
      await waitFor(`${name} to settle in the blackhole`, () => call.settled(), SETTLE_MS);
      expectSilenceError(name, call.outcome().error);
    }

    await proxy.setMode('pass', { keepDamaged: kind === 'pg' });
    for (const [name, call] of Object.entries(calls)) {
      await waitFor(
        `${name} to answer after the heal`,
        async () => {
          const attempt = track(call());
          await waitFor(`${name} to settle after the heal`, () => attempt.settled(), SETTLE_MS);
          const { error } = attempt.outcome();
          if (error !== undefined) expectSilenceError(name, error);
          return error === undefined;
        },
        SETTLE_MS * 2,
      );
    }
    process.stdout.write(
      `silent-admin/${kind}: calls=${pending.length} proxyConnections=${proxy.accepted} halfOpen=${proxy.damagedConnections}\n`,
    );
  });
});

describe('operations: silent-admin (pg health and metrics, half-open after the heal)', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  it('a readiness probe that gave up leaves no connection held: a small pool recovers', async () => {
    const { t, proxy } = fixture;
    await proxy.setMode('pass');
    // Connection attempts bounded (as the CLI's pool does): ferry cannot end pg's pending connect,
    // which would hold its slot for good in a blackhole (core README, "When PostgreSQL goes silent").
    const pool = new pg.Pool({
      connectionString: proxy.urlFor(t.url),
      max: 2,
      connectionTimeoutMillis: 1_000,
    });
    pool.on('error', () => undefined);
    suite.defer(() => pool.end());
    suite.defer(() => proxy.resetAll());
    const health = createHealth({ db: fromPg(pool), checkTimeoutMs: STATEMENT_TIMEOUT_MS });
    expect((await health.readiness()).status).toBe('up');
    expect((await health.details()).status).toBe('up');

    await proxy.setMode('blackhole');
    for (let probe = 0; probe < 3; probe += 1) {
      const ready = track(health.readiness());
      await waitFor('readiness in the blackhole', () => ready.settled(), SETTLE_MS);
      expect(ready.outcome().value?.status).toBe('down');
    }
    const details = track(health.details());
    await waitFor('details in the blackhole', () => details.settled(), SETTLE_MS);
    expect(details.outcome().value?.status).toBe('down');

    await proxy.setMode('pass', { keepDamaged: true });
    expect(proxy.damagedConnections).toBeGreaterThan(0);
    await waitFor(
      'readiness up after the heal',
      async () => (await health.readiness()).status === 'up',
      SETTLE_MS,
    );
    await waitFor(
      'details up after the heal',
      async () => (await health.details()).status === 'up',
      SETTLE_MS,
    );
  });

  it('a scrape keeps the last values while the database is silent; the gauges move again after the heal', async () => {
    const { t, proxy } = fixture;
    await proxy.setMode('pass');
    const pool = new pg.Pool({ connectionString: proxy.urlFor(t.url), max: 2 });
    pool.on('error', () => undefined);
    suite.defer(() => pool.end());
    suite.defer(() => proxy.resetAll());
    const metrics = createFerryMetrics({
      stats: {
        db: fromPg(pool),
        inbox: false,
        timeoutMs: 200,
        cacheMs: 0,
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      },
    });
    const pendingGauge = async (): Promise<number> => {
      const text = await metrics.registry.metrics();
      return Number(/^ferry_outbox_events\{status="PENDING"\} (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
    };
    // The first read has 200 ms (timeoutMs); on a loaded machine it may miss them and leave the
    // gauge without a value, so scrape until one read answered before the database goes silent.
    const { before } = await waitFor(
      'a first scrape that answered',
      async () => {
        const value = await pendingGauge();
        return Number.isNaN(value) ? undefined : { before: value };
      },
      SETTLE_MS,
    );
    expect(before).toBeGreaterThanOrEqual(0);

    await proxy.setMode('blackhole');
    for (let scrape = 0; scrape < 3; scrape += 1) {
      const read = track(pendingGauge());
      await waitFor('a scrape in the blackhole', () => read.settled(), SETTLE_MS);
      expect(read.outcome().value).toBe(before);
    }
    expect(await metrics.registry.metrics()).toMatch(
      /ferry_stats_scrape_errors_total\{source="outbox",reason="timeout"\} [1-9]/,
    );

    await proxy.setMode('pass', { keepDamaged: true });
    await emit(t.db, { type: 'silent.metrics', payload: {} });
    await waitFor(
      'the gauge to move after the heal',
      async () => (await pendingGauge()) === before + 1,
      SETTLE_MS,
    );
  });
});

describe('operations: silent-admin (the CLI, an answer lost after connecting)', () => {
  const suite = faultSuite();
  const fixture = proxiedDatabase();

  /**
   * Runs `argv` through the proxy while the test holds an exclusive lock on outbox_events, so the
   * CLI's statement is sent on an established connection and waits; then the proxy turns into a
   * blackhole and the lock is released: the answer never comes back.
   */
  async function lostAnswer(argv: readonly string[], env: NodeJS.ProcessEnv) {
    const { t, proxy } = fixture;
    await proxy.setMode('pass');
    const locker = new pg.Client({ connectionString: t.url });
    locker.on('error', () => undefined); // the database is dropped at the end
    await locker.connect();
    suite.defer(() => locker.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
    const lines: string[] = [];
    const io = { out: (line: string) => void lines.push(line), err: (line: string) => void lines.push(line) };
    const run = track(runCli([...argv, '--database-url', proxy.urlFor(t.url)], io, env));
    await waitFor('the CLI statement waiting on the lock', async () => {
      const [row] = await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return (row?.n ?? 0) > 0;
    });
    await proxy.setMode('blackhole');
    await locker.query('COMMIT');
    await waitFor('the CLI to end', () => run.settled(), SETTLE_MS);
    await proxy.setMode('pass');
    return { code: run.outcome().value, lines };
  }

  it('--statement-timeout ends a statement whose answer never comes: FERRY_TIMEOUT, exit 1', async () => {
    const { code, lines } = await lostAnswer(['outbox', 'stats', '--statement-timeout', '1s'], {});
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(/FERRY_TIMEOUT/);
  });

  it('FERRY_STATEMENT_TIMEOUT bounds an audited mutation (its transaction) the same way', async () => {
    const { code, lines } = await lostAnswer(['outbox', 'purge-sent', '--before', '1d'], {
      FERRY_STATEMENT_TIMEOUT: '1s',
    });
    expect(code).toBe(1);
    // FERRY_DATABASE_UNAVAILABLE when PostgreSQL ended the session first (the transaction's
    // idle_in_transaction_session_timeout, which the deadline also sets: its FIN passes the proxy).
    expect(lines.join('\n')).toMatch(/FERRY_(TIMEOUT|DATABASE_UNAVAILABLE)/);
  });
});
