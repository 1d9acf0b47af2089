import type { Pool, PoolClient } from 'pg';
import type { PrismaTransactionLike, SqlExecutor, TransactionOptions } from './executor';

/**
 * An executor over a node-postgres pool, for code that has no Prisma client: the CLI,
 * the migrator in scripts, and ferry's own LISTEN connection. Counts come back as the
 * driver returns them (bigint as string), so cast in SQL (`::int`) where a number is needed.
 */
export function fromPg(pool: Pool): SqlExecutor {
  return bind(pool, false);
}

type Queryable = Pool | PoolClient;

function bind(target: Queryable, inTransaction: boolean): SqlExecutor {
  const client: PrismaTransactionLike = {
    async $queryRawUnsafe<T>(text: string, ...values: unknown[]) {
      return (await target.query(text, values)).rows as T;
    },
    async $executeRawUnsafe(text: string, ...values: unknown[]) {
      return (await target.query(text, values.length > 0 ? values : undefined)).rowCount ?? 0;
    },
  };
  const executor: SqlExecutor = {
    client,
    inTransaction,
    async query<T>(text: string, values: readonly unknown[] = []) {
      return (await target.query(text, [...values])).rows as T[];
    },
    async execute(text: string, values: readonly unknown[] = []) {
      return client.$executeRawUnsafe(text, ...values);
    },
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}) {
      if (inTransaction || !('connect' in target) || !isPool(target)) return work(executor);
      const connection = await target.connect();
      try {
        await connection.query('BEGIN');
        if (options.timeoutMs !== undefined) {
          await connection.query(`SELECT set_config('statement_timeout', $1, true)`, [
            String(options.timeoutMs),
          ]);
        }
        const result = await work(bind(connection, true));
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
  };
  return executor;
}

function isPool(target: Queryable): target is Pool {
  return typeof (target as Pool).totalCount === 'number';
}
