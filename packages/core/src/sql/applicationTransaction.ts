import type { ClientBase, Pool } from 'pg';
import { FerryValidationError } from '../errors';
import { received } from '../optionChecks';
import { fromPrisma, type KyselyLike, type PrismaTransactionLike, type SqlExecutor } from './executor';
import { fromPg, fromPgClient } from './fromPg';

/**
 * What an application hands ferry to run in (emit, emitMany, the admins): its open transaction
 * (a Prisma transaction client, a node-postgres client after BEGIN, a Kysely `Transaction`),
 * whose commit or rollback ferry's writes then share; or a root client (a Prisma client, a pg
 * `Pool` or idle client, a Kysely instance), on which ferry commits a transaction of its own;
 * or a `SqlExecutor`. A node-postgres client not connected yet, or with statements not yet
 * answered, is refused (fromPgClient): whether it is in a transaction is not known yet.
 */
export type ApplicationTransaction = SqlExecutor | PrismaTransactionLike | ClientBase | Pool | KyselyLike;

type Shape = Partial<Record<'query' | 'execute' | '$queryRawUnsafe' | 'executeQuery', unknown>> & {
  inTransaction?: unknown;
  isTransaction?: unknown;
  totalCount?: unknown;
};

/** ferry's executor for `tx`: the one place an application's client is told apart. */
export function executorFor(tx: ApplicationTransaction, field = 'tx'): SqlExecutor {
  const shape = (typeof tx === 'object' && tx !== null ? tx : {}) as Shape;
  if (typeof shape.inTransaction === 'boolean' && typeof shape.execute === 'function') {
    return tx as SqlExecutor;
  }
  if (typeof shape.$queryRawUnsafe === 'function') return fromPrisma(tx as PrismaTransactionLike);
  if (typeof shape.executeQuery === 'function' && typeof shape.isTransaction === 'boolean') {
    return loadKysely().fromKysely(tx as never);
  }
  if (typeof shape.query === 'function') {
    return typeof shape.totalCount === 'number' ? fromPg(tx as Pool) : fromPgClient(tx as ClientBase);
  }
  throw new FerryValidationError(
    field,
    `must be a Prisma, node-postgres or Kysely client or transaction, or a SqlExecutor; got ${received(tx)}`,
  );
}

/** Loaded on first use, so applications without Kysely never load it. */
function loadKysely(): typeof import('./kysely') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./kysely') as typeof import('./kysely');
}
