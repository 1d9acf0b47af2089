import type { Kysely, Transaction } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import {
  createInbox,
  createInboxTenancyContext,
  emit,
  Inbox,
  pgTransactions,
  prismaTransactions,
  type PrismaTransactionLike,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import type { Prisma, PrismaClient } from '../../../../generated/prisma/client';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type TxOf<I> = I extends Inbox<infer T> ? T : never;

// Compile-time checks (tsconfig.tests.json): `createInbox(prisma)` needs no type argument for
// handlers to get the application's transaction client; a bare client keeps the default, and
// `new Inbox(prisma)` stays assignable to an `Inbox` annotation.
declare const prisma: PrismaClient;
function _inferred() {
  return createInbox(prisma, {
    handlers: {
      orders: async (_payload, context) => {
        const tx: Prisma.TransactionClient = context.tx;
        await tx.$executeRaw`SELECT 1`;
      },
    },
  });
}
declare const plain: PrismaTransactionLike & { $transaction: (...args: never[]) => Promise<unknown> };
function _fallback() {
  return createInbox(plain);
}
function annotated(): Inbox {
  return new Inbox(prisma);
}
const inferredIsTransactionClient: Equal<TxOf<ReturnType<typeof _inferred>>, Prisma.TransactionClient> = true;
const fallbackIsTransactionLike: Equal<TxOf<ReturnType<typeof _fallback>>, PrismaTransactionLike> = true;

// Each transaction adapter hands handlers the application's own transaction object, which emit
// and the tenancy wrapper take as they are.
declare const pool: Pool;
interface Db {
  orders: { id: string };
}
declare const kysely: Kysely<Db>;
function _pg() {
  return createInbox(pgTransactions(pool), {
    handlerContext: createInboxTenancyContext(),
    handlers: {
      orders: async (_payload, { tx }) => {
        await tx.query('SELECT 1');
        await emit(tx, { type: 'order.handled', payload: {} });
      },
    },
  });
}
function _kysely() {
  return createInbox(kyselyTransactions(kysely), {
    handlers: {
      orders: async (_payload, { tx }) => {
        await tx.selectFrom('orders').select('id').execute();
        await emit(tx, { type: 'order.handled', payload: {} });
      },
    },
  });
}
function _prismaAdapter() {
  return createInbox(prismaTransactions(prisma));
}
const pgIsPoolClient: Equal<TxOf<ReturnType<typeof _pg>>, PoolClient> = true;
const kyselyIsTransaction: Equal<TxOf<ReturnType<typeof _kysely>>, Transaction<Db>> = true;
const prismaAdapterIsTransactionClient: Equal<
  TxOf<ReturnType<typeof _prismaAdapter>>,
  Prisma.TransactionClient
> = true;

describe('Inbox typing', () => {
  it('infers the handler transaction type from the Prisma client (checked by tsc)', () => {
    expect([inferredIsTransactionClient, fallbackIsTransactionLike]).toEqual([true, true]);
    expect(typeof annotated).toBe('function');
  });

  it('infers it from a transaction adapter: PoolClient, Transaction<DB>, Prisma.TransactionClient (checked by tsc)', () => {
    expect([pgIsPoolClient, kyselyIsTransaction, prismaAdapterIsTransactionClient]).toEqual([
      true,
      true,
      true,
    ]);
  });
});
