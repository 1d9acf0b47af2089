import type { ClientBase, Pool } from 'pg';
import { FerryConfigError, FerryValidationError } from '../errors';
import { EXECUTOR_METHODS, missingMethods, received } from '../optionChecks';
import { fromPrisma, type KyselyLike, type PrismaTransactionLike, type SqlExecutor } from './executor';
import { fromPgClient, perCallPgClient, pooledExecutor } from './fromPg';
import { KYSELY_METHODS } from './kyselyShape';
import { takingTurns } from './rolledBackSavepoint';

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

/**
 * ferry's executor for `tx`, for one call (emit, a tenancy context): the one place an
 * application's client is told apart. Inside the application's transaction, its statements wait
 * while a dry run of another call holds that transaction (takingTurns).
 */
export function executorFor(tx: ApplicationTransaction, field = 'tx'): SqlExecutor {
  // A call's argument (emit's tx): invalid input, as every other refused argument of a call.
  const kind = kindOf(tx, field, FerryValidationError);
  return takingTurns(
    tx,
    kind === 'pg client' ? fromPgClient(tx as ClientBase, field) : executorOf(tx, kind, field),
  );
}

/**
 * ferry's executor for `tx`, for an object that keeps it across calls (the admins, the audit log),
 * with `wrap` (the object's deadlines, retries, translation) around it. Whether a Prisma client or
 * transaction, a Kysely instance or transaction, a pool or an executor is inside the application's
 * transaction never changes; a node-postgres client's does with each BEGIN and COMMIT the
 * application sends on it, so on one the executor is made again at each statement and each
 * transaction, from the client's status then (perCallPgClient), as emit makes it at each call.
 * Inside the application's transaction, its statements take turns with other calls' dry runs
 * (takingTurns), below `wrap`.
 */
export function heldExecutor(
  tx: ApplicationTransaction,
  field: string,
  wrap: (db: SqlExecutor) => SqlExecutor,
): SqlExecutor {
  // The object's client, given once when it is built: refused as configuration (FERRY_CONFIG_INVALID
  // naming it), as createInbox's client and createRelay's db are.
  const kind = kindOf(tx, field, FerryConfigError);
  const turns = (db: SqlExecutor): SqlExecutor => wrap(takingTurns(tx, db));
  return kind === 'pg client'
    ? perCallPgClient(tx as ClientBase, field, turns)
    : turns(executorOf(tx, kind, field));
}

type Kind = 'executor' | 'prisma' | 'kysely' | 'pg pool' | 'pg client';

/** Which client `tx` is; anything else is refused on `field` with `Refusal`. */
function kindOf(
  tx: ApplicationTransaction,
  field: string,
  Refusal: typeof FerryConfigError | typeof FerryValidationError,
): Kind {
  const shape = (typeof tx === 'object' && tx !== null ? tx : {}) as Shape;
  if (typeof shape.inTransaction === 'boolean' && typeof shape.execute === 'function') {
    // A SqlExecutor by its shape: ferry calls every one of its methods on it.
    const missing = missingMethods(shape, EXECUTOR_METHODS);
    if (missing === '') return 'executor';
    throw new Refusal(
      field,
      `must be a SqlExecutor with query(), execute() and transaction(); got an object missing ${missing}`,
    );
  }
  if (typeof shape.$queryRawUnsafe === 'function') return 'prisma';
  if (typeof shape.executeQuery === 'function' && typeof shape.isTransaction === 'boolean') {
    // Refused here, on `field` as `Refusal`: fromKysely's own refusal names its `db` (review 91).
    const missing = missingMethods(shape, KYSELY_METHODS);
    if (missing === '') return 'kysely';
    throw new Refusal(field, `must be a Kysely instance or Transaction; got an object missing ${missing}`);
  }
  if (typeof shape.query === 'function')
    return typeof shape.totalCount === 'number' ? 'pg pool' : 'pg client';
  throw new Refusal(
    field,
    `must be a Prisma, node-postgres or Kysely client or transaction, or a SqlExecutor; got ${received(tx)}`,
  );
}

/** The executor of a client whose transaction status does not change, given as `field`. */
function executorOf(
  tx: ApplicationTransaction,
  kind: Exclude<Kind, 'pg client'>,
  field: string,
): SqlExecutor {
  switch (kind) {
    case 'executor':
      return tx as SqlExecutor;
    case 'prisma':
      return fromPrisma(tx as PrismaTransactionLike);
    case 'kysely':
      return loadKysely().fromKysely(tx as never);
    case 'pg pool':
      return pooledExecutor(tx as Pool, field);
  }
}

/** Loaded on first use, so applications without Kysely never load it. */
function loadKysely(): typeof import('./kysely') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./kysely') as typeof import('./kysely');
}
