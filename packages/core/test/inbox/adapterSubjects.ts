import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  fromPrisma,
  pgTransactions,
  prismaTransactions,
  type PrismaTransactionLike,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { prismaOnPool, type TestDatabase } from '../../../../test-support/database';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

/** One transaction adapter on a pool of its own, with the application's own client API on its `tx`. */
export interface AdapterSubject<TTx> {
  readonly adapter: TransactionAdapter<TTx>;
  /** A business_rows row for `receiptId`, written on `tx` with the client's own API. */
  write(tx: TTx, receiptId: string, note: string): Promise<unknown>;
  /** A statement on `tx` that takes `seconds`. */
  sleep(tx: TTx, seconds: number): Promise<unknown>;
  /** `text`, a statement without parameters, on `tx` with the client's own API. */
  run(tx: TTx, text: string): Promise<unknown>;
  /** The subject's own pool (with max 1, the connection its handler transactions ran on). */
  readonly pool: Pool;
  end(): Promise<void>;
}

type Factory = (t: TestDatabase, max: number) => AdapterSubject<unknown>;

const pg: Factory = (t, max) => {
  const pool = listened(new Pool({ connectionString: t.url, max }));
  const subject: AdapterSubject<PoolClient> = {
    adapter: pgTransactions(pool),
    write: (tx, id, note) => tx.query(INSERT, [id, note]),
    sleep: (tx, seconds) => tx.query('SELECT pg_sleep($1)', [seconds]),
    run: (tx, text) => tx.query(text),
    pool,
    end: () => pool.end(),
  };
  return subject as AdapterSubject<unknown>;
};

const kysely: Factory = (t, max) => {
  const pool = listened(new Pool({ connectionString: t.url, max }));
  // The listener the README asks for: Kysely does not hear a checked-out connection's `error`.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const subject: AdapterSubject<Transaction<Record<string, never>>> = {
    adapter: kyselyTransactions(db),
    write: (trx, id, note) =>
      sql`INSERT INTO business_rows (receipt_id, note) VALUES (${id}::uuid, ${note})`.execute(trx),
    sleep: (trx, seconds) => sql`SELECT pg_sleep(${seconds})`.execute(trx),
    run: (trx, text) => sql.raw(text).execute(trx),
    pool,
    end: () => db.destroy(),
  };
  return subject as AdapterSubject<unknown>;
};

const prisma: Factory = (t, max) => {
  const pool = listened(new Pool({ connectionString: t.url, max }));
  const client = prismaOnPool(pool);
  const subject: AdapterSubject<PrismaTransactionLike> = {
    adapter: prismaTransactions(client),
    write: (tx, id, note) => fromPrisma(tx).execute(INSERT, [id, note]),
    sleep: (tx, seconds) => fromPrisma(tx).query('SELECT pg_sleep($1)', [seconds]),
    run: (tx, text) => tx.$executeRawUnsafe(text),
    pool,
    end: async () => {
      await client.$disconnect();
      await pool.end();
    },
  };
  return subject as AdapterSubject<unknown>;
};

/** The three adapters, by name, for describe.each. */
export const ADAPTER_SUBJECTS: Array<[string, Factory]> = [
  ['pgTransactions(pool)', pg],
  ['kyselyTransactions(db)', kysely],
  ['prismaTransactions(prisma)', prisma],
];

/** A consumer name of the adapter's own: another adapter's retried receipt is never its worker's. */
export function consumerOf(adapterName: string): string {
  return `orders-${adapterName.replace(/\W/g, '')}`;
}
