/**
 * The time limits of a node-postgres / Kysely handler transaction, from the first statement on,
 * against the real PostgreSQL: a claim check stuck behind a lock on the inbox table (a migration
 * taking ACCESS EXCLUSIVE, or an ALTER queued behind a long transaction), a handler stuck on a
 * row lock or in a long statement, and the connection the pool hands out afterwards.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Client, Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions, type TransactionAdapter } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  makeInbox,
  message,
  receiptRow,
  recorder,
  waitFor,
} from './helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';
const SETTINGS = `SELECT current_setting('lock_timeout') AS lock,
  current_setting('statement_timeout') AS statement,
  current_setting('idle_in_transaction_session_timeout') AS idle`;
const WORKER = { transactionTimeoutMs: 400, lockTimeoutMs: 100, leaseMs: 60_000, heartbeatIntervalMs: 5_000 };

let t: TestDatabase;
let pool: Pool;
let kysely: Kysely<unknown>;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  await t.db.execute('CREATE TABLE lock_target (id int PRIMARY KEY, n int NOT NULL)');
  await t.db.execute('INSERT INTO lock_target VALUES (1, 0)');
  // One connection: the pool hands the handler's connection to whoever comes next.
  pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
});
afterAll(async () => {
  await kysely.destroy();
  // Kysely ends the pool only if it ever used it (not when its tests are filtered out).
  if (!pool.ended) await pool.end();
  await t.drop();
});

interface Flavour<TTx> {
  readonly name: string;
  adapter(): TransactionAdapter<TTx>;
  run(tx: TTx, text: string, values?: unknown[]): Promise<void>;
}

const flavours: [string, Flavour<unknown>][] = [
  [
    'node-postgres',
    {
      name: 'pg',
      adapter: () => pgTransactions(pool),
      run: async (tx, text, values = []) => void (await (tx as PoolClient).query(text, values)),
    } as Flavour<PoolClient> as Flavour<unknown>,
  ],
  [
    'Kysely',
    {
      name: 'kysely',
      adapter: () => kyselyTransactions(kysely),
      run: async (tx, text, values = []) => {
        const parts = text.split(/\$\d+/);
        const query = sql.join(
          parts.map((part, i) => (i < values.length ? sql`${sql.raw(part)}${values[i]}` : sql.raw(part))),
          sql.raw(''),
        );
        await query.execute(tx as Transaction<unknown>);
      },
    } as Flavour<Transaction<unknown>> as Flavour<unknown>,
  ],
];

async function poolSettings(): Promise<Record<string, string>> {
  return (await pool.query<Record<string, string>>(SETTINGS)).rows[0] ?? {};
}

describe.each(flavours)('%s handler transaction limits', (_label, flavour) => {
  it('cancels a claim check stuck behind a lock on the inbox table at transactionTimeoutMs; the handler never runs', async () => {
    const locker = listened(new Client({ connectionString: t.url }));
    await locker.connect();
    const base = flavour.adapter();
    let ran = false;
    let locked = false;
    // Takes the table lock once the claim is made, just before the handler transaction opens.
    const adapter: TransactionAdapter<unknown> = {
      ...base,
      transaction: async (work, options) => {
        if (!locked) {
          locked = true;
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE ferry_inbox_receipts IN ACCESS EXCLUSIVE MODE');
        }
        return base.transaction(work, options);
      },
    };
    const { events, observer } = recorder();
    const inbox = makeInbox(adapter, {
      worker: WORKER,
      observer,
      handlers: {
        [`${flavour.name}-table-locked`]: async () => {
          ran = true;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: `${flavour.name}-table-locked` }));
    let settled = false;
    const result = inbox.runOnce().finally(() => (settled = true));
    const waiting = async (): Promise<boolean> => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%set_config(%lock_timeout%'`,
      );
      return row?.n !== 0;
    };
    try {
      // The lock is held until the claim check stopped waiting for it (or long past the deadline).
      await waitFor('the claim check waiting for the table lock', async () => settled || (await waiting()));
      await waitFor(
        'the claim check no longer waiting for the table lock',
        async () => settled || !(await waiting()),
        20 * WORKER.transactionTimeoutMs,
      ).catch(() => undefined);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(await result).toMatchObject({ claimed: 1, completed: 0 });
    // The handler never started: its claim is given back, its attempt returned (review 149; it
    // was a retry with the attempt spent, at maxAttempts 1 DEAD without a run).
    const row = await receiptRow(t, record.id);
    expect({
      ran,
      status: row.status,
      attempts: row.attempts,
      canceled: events.some(
        (e) =>
          e.type === 'infrastructure-error' &&
          e.operation === 'handler-transaction' &&
          e.error.includes('statement timeout'),
      ),
    }).toEqual({ ran: false, status: 'PENDING', attempts: 0, canceled: true });
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('bounds a handler waiting on a row lock by lockTimeoutMs; the pooled connection keeps no limit', async () => {
    const holder = listened(new Client({ connectionString: t.url }));
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT * FROM lock_target WHERE id = 1 FOR UPDATE');
    try {
      const inbox = makeInbox(flavour.adapter(), {
        worker: { ...WORKER, transactionTimeoutMs: 60_000 },
        handlers: {
          [`${flavour.name}-row-locked`]: async (_p, context) => {
            await flavour.run(context.tx, INSERT, [context.receiptId, 'locked']);
            await flavour.run(context.tx, 'UPDATE lock_target SET n = n + 1 WHERE id = 1');
          },
        },
      });
      const { record } = await inbox.accept(message({ consumer: `${flavour.name}-row-locked` }));
      expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
      expect(String((await receiptRow(t, record.id)).last_error)).toContain('lock timeout');
      expect(await businessCount(t, record.id)).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('cancels a handler statement longer than transactionTimeoutMs; the pooled connection keeps no limit', async () => {
    const inbox = makeInbox(flavour.adapter(), {
      worker: WORKER,
      handlers: {
        [`${flavour.name}-long`]: async (_p, context) => {
          await flavour.run(context.tx, INSERT, [context.receiptId, 'long']);
          await flavour.run(context.tx, 'SELECT pg_sleep(600)');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: `${flavour.name}-long` }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
    expect(String((await receiptRow(t, record.id)).last_error)).toContain('statement timeout');
    expect(await businessCount(t, record.id)).toBe(0);
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('keeps the limits across a handler savepoint rolled back, and completes', async () => {
    const seen: string[] = [];
    const inbox = makeInbox(flavour.adapter(), {
      worker: WORKER,
      handlers: {
        [`${flavour.name}-savepoint`]: async (_p, context) => {
          await flavour.run(context.tx, 'SAVEPOINT probe');
          await flavour.run(context.tx, "SELECT set_config('statement_timeout', '0', true)");
          await flavour.run(context.tx, 'ROLLBACK TO SAVEPOINT probe');
          await flavour.run(context.tx, INSERT, [context.receiptId, 'savepoint']);
          await flavour.run(
            context.tx,
            "INSERT INTO business_rows (receipt_id, note) SELECT $1::uuid, current_setting('statement_timeout')",
            [context.receiptId],
          );
          seen.push('ran');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: `${flavour.name}-savepoint` }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(seen).toEqual(['ran']);
    const notes = await t.db.query<{ note: string }>(
      'SELECT note FROM business_rows WHERE receipt_id = $1::uuid ORDER BY id',
      [record.id],
    );
    expect(notes.map((row) => row.note)).toEqual(['savepoint', '400ms']);
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('does not complete a handler that ends the transaction with its own ROLLBACK; the pooled connection keeps no limit', async () => {
    const inbox = makeInbox(flavour.adapter(), {
      worker: WORKER,
      handlers: {
        [`${flavour.name}-rollback`]: async (_p, context) => {
          await flavour.run(context.tx, INSERT, [context.receiptId, 'rolled back']);
          await flavour.run(context.tx, 'ROLLBACK');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: `${flavour.name}-rollback` }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0, retried: 1 });
    expect(await businessCount(t, record.id)).toBe(0);
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('gives a lost claim a clean end: the handler never runs and the pooled connection keeps no limit', async () => {
    let ran = false;
    const inbox = makeInbox(flavour.adapter(), {
      worker: WORKER,
      handlers: {
        [`${flavour.name}-lost`]: async () => {
          ran = true;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: `${flavour.name}-lost` }));
    const base = flavour.adapter();
    const stealing = makeInbox(
      {
        ...base,
        transaction: async (work, options) => {
          // Another worker took the claim over between the claim and the handler transaction.
          await t.db.execute(
            'UPDATE ferry_inbox_receipts SET claim_token = gen_random_uuid() WHERE id = $1',
            [record.id],
          );
          return base.transaction(work, options);
        },
      },
      { worker: WORKER, handlers: inbox.options.handlers },
    );
    expect(await stealing.runOnce()).toMatchObject({ claimed: 1, completed: 0, leaseLost: 1 });
    expect(ran).toBe(false);
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });
});

describe("a node-postgres pool with the application's own timeouts", () => {
  it('gives the handler the worker limits and the next user of the connection its own again', async () => {
    const own = listened(
      new Pool({
        connectionString: t.url,
        max: 1,
        options: '-c statement_timeout=4321 -c lock_timeout=1234 -c idle_in_transaction_session_timeout=5678',
      }),
    );
    try {
      let seen: Record<string, string> = {};
      const inbox = makeInbox(pgTransactions(own), {
        worker: WORKER,
        handlers: {
          'pg-own-settings': async (_p, context) => {
            seen = (await context.tx.query<Record<string, string>>(SETTINGS)).rows[0] ?? {};
          },
        },
      });
      await inbox.accept(message({ consumer: 'pg-own-settings' }));
      expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
      expect(seen).toEqual({ lock: '100ms', statement: '400ms', idle: '400ms' });
      const after = (await own.query<Record<string, string>>(SETTINGS)).rows[0];
      expect(after).toEqual({ lock: '1234ms', statement: '4321ms', idle: '5678ms' });
    } finally {
      await own.end();
    }
  });
});

describe('node-postgres handler transaction deadline', () => {
  it('ends a handler left idle past transactionTimeoutMs (an awaited call, its signal ignored) without an unhandled connection error', async () => {
    // PostgreSQL ending an idle-in-transaction session sends FATAL to a client with no query
    // running: node-postgres emits it as an 'error' event, which ends the process when nobody
    // listens. ferry holds the connection of a pgTransactions handler (README: Kysely users
    // give their pool the listener; handlerConnection.test.ts).
    const inbox = makeInbox(pgTransactions(pool), {
      worker: WORKER,
      handlers: {
        'pg-idle': async (_p, context) => {
          await context.tx.query(INSERT, [context.receiptId, 'idle']);
          await new Promise((resolve) => setTimeout(resolve, 4 * WORKER.transactionTimeoutMs));
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-idle' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0, retried: 1 });
    expect(await businessCount(t, record.id)).toBe(0);
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });

  it('ends a transaction its handler keeps busy past transactionTimeoutMs (the signal ignored): its locks go, the receipt is retried', async () => {
    // Each statement is short and no pause is long, so neither statement_timeout nor
    // idle_in_transaction_session_timeout ends it: only a deadline on the whole transaction does.
    let stop = false;
    const inbox = makeInbox(pgTransactions(pool), {
      worker: WORKER,
      handlers: {
        'pg-busy': async (_p, context) => {
          await context.tx.query(INSERT, [context.receiptId, 'busy']);
          await context.tx.query('SELECT * FROM lock_target WHERE id = 1 FOR UPDATE');
          while (!stop) await context.tx.query('SELECT pg_sleep(0.02)');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-busy' }));
    let first: unknown;
    void inbox.runOnce().then(
      (result) => (first = result),
      (error: unknown) => (first = error),
    );
    const probe = listened(new Client({ connectionString: t.url }));
    await probe.connect();
    try {
      await waitFor('the handler transaction to end', async () => first, 25 * WORKER.transactionTimeoutMs);
      expect(first).toMatchObject({ retried: 1, completed: 0 });
      expect(String((await receiptRow(t, record.id)).last_error)).toContain('FERRY_TIMEOUT');
      expect(await businessCount(t, record.id)).toBe(0);
      // The connection is closed, not waited for: PostgreSQL lets the row go once the backend
      // notices, after the statement it is running.
      const lockable = async (): Promise<boolean> => {
        await probe.query('BEGIN');
        try {
          await probe.query('SELECT * FROM lock_target WHERE id = 1 FOR UPDATE NOWAIT');
          return true;
        } catch {
          return false;
        } finally {
          await probe.query('ROLLBACK');
        }
      };
      await waitFor('the row lock to be released', lockable, 10 * WORKER.transactionTimeoutMs);
    } finally {
      stop = true;
      await probe.end();
    }
    expect(await poolSettings()).toEqual({ lock: '0', statement: '0', idle: '0' });
  });
});
