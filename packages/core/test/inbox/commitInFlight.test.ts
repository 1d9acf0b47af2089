/**
 * The worker gives up on a handler transaction (a heartbeat after transactionTimeoutMs) while that
 * transaction's COMMIT is in flight: a deferred constraint trigger makes the COMMIT take 1 s, and
 * the handler asks to commit 1.5 s into a 2 s deadline, so the worker stops waiting (at about 2.2 s)
 * during the COMMIT (which ends at about 2.5 s, within its own statement_timeout). The trigger turns
 * the connection check off for the COMMIT (node-postgres closes the connection when the worker
 * gives up, and a closed connection would otherwise end this COMMIT): the COMMIT lands as one that
 * waits for a synchronous standby does, durable locally by then, or one whose answer is lost.
 *
 * The COMMIT lands: the business write exists once, the receipt is COMPLETED, the handler ran once,
 * and the failure transition the worker attempts meanwhile is fenced by the row lock the completion
 * holds (it waits, then finds the row COMPLETED). The worker then reads the receipt again and
 * reports it completed (reconciled), as a lost commit response is, not `lease-lost`.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions, type InboxEvent, type TransactionAdapter } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  await t.db.execute(`
    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM set_config('client_connection_check_interval', '0', true);
      PERFORM pg_sleep(1.0);
      RETURN NULL;
    END $$`);
  await t.db.execute(`
    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON business_rows
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
});
afterAll(async () => {
  await t.drop();
});

interface Subject {
  adapter: TransactionAdapter<unknown>;
  write(tx: unknown, id: string): Promise<unknown>;
  end(): Promise<void>;
}

const subjects: Array<[string, (t: TestDatabase) => Subject]> = [
  [
    'pgTransactions',
    (db) => {
      const pool = listened(new Pool({ connectionString: db.url, max: 4 }));
      return {
        adapter: pgTransactions(pool) as TransactionAdapter<unknown>,
        write: (tx, id) =>
          (tx as PoolClient).query('INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)', [
            id,
            'x',
          ]),
        end: () => pool.end(),
      };
    },
  ],
  [
    'kyselyTransactions',
    (db) => {
      const pool = listened(new Pool({ connectionString: db.url, max: 4 }));
      pool.on('connect', (client) => client.on('error', () => undefined));
      const k = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
      return {
        adapter: kyselyTransactions(k) as TransactionAdapter<unknown>,
        write: (tx, id) =>
          sql`INSERT INTO business_rows (receipt_id, note) VALUES (${id}::uuid, 'x')`.execute(
            tx as Transaction<Record<string, never>>,
          ),
        end: () => k.destroy(),
      };
    },
  ],
];

describe.each(subjects)('COMMIT in flight when the worker gives up, on %s', (_name, factory) => {
  it('applies the write once and reports the receipt completed', async () => {
    const subject = factory(t);
    const events: InboxEvent[] = [];
    let runs = 0;
    const inbox = makeInbox(subject.adapter, {
      observer: (event) => {
        events.push(event);
      },
      worker: { concurrency: 1, prefetch: 0, transactionTimeoutMs: 2_000, consumers: ['slow'] },
      handlers: {
        slow: async (_payload, context) => {
          runs += 1;
          await subject.write(context.tx, context.receiptId);
          await new Promise((resolve) => setTimeout(resolve, 1_500));
        },
      },
    });
    try {
      const { record } = await inbox.accept(message({ consumer: 'slow' }));
      const first = await inbox.runOnce();
      // Nothing left to run again: no RETRYABLE receipt whose handler would apply twice.
      const again = await inbox.runOnce();
      expect(again.claimed).toBe(0);
      expect(runs).toBe(1);
      expect(await businessCount(t, record.id)).toBe(1);
      expect((await receiptRow(t, record.id)).status).toBe('COMPLETED');
      // The reconciliation: the receipt completed, so it is reported completed.
      expect(events.map((event) => event.type)).not.toContain('lease-lost');
      expect(events).toContainEqual(expect.objectContaining({ type: 'completed', reconciled: true }));
      expect(first).toMatchObject({ claimed: 1, completed: 1, leaseLost: 0 });
    } finally {
      await inbox.close();
      await subject.end();
    }
  });
});
