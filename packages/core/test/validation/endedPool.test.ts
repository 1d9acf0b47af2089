/**
 * A node-postgres pool the application ended (`pool.end()`), given to ferry. It can never run a
 * statement again, so every call fails the same way for ever.
 *
 * Given already ended, it is refused at once with FERRY_VALIDATION_FAILED naming the argument
 * that carried it, as an ended client is: `pool` for fromPg and pgTransactions, `client` for the
 * admins, `executor` for the audit log, `tx` for emit (on HEAD every one said `tx`).
 *
 * Ended after ferry was given it (a shutdown that ends the pool before the relay, the inbox or a
 * consumer), each call fails with FERRY_CLOSED, not retriable, naming the argument where ferry
 * knows it (`details.field`); on HEAD a retriable, unclassified FERRY_DATABASE_ERROR ("Cannot use
 * a pool after calling end on the pool", logged as unclassified), which a transport's acceptance
 * takes for one message's fault (isBatchWideFailure false) and a caller's retry loop retries for
 * ever. The same through Kysely and Prisma on an ended pool, where ferry does not know the pool.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import pino from 'pino';
import {
  createAuditLog,
  createOutboxAdmin,
  createRelay,
  emit,
  fromPg,
  Inbox,
  InboxAdmin,
  pgTransactions,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { InMemoryPublisher } from '@ferry/testing';
import { closed, failure } from '../../../../test-support/endedConnections';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../../test-support/database';

const quiet = pino({ level: 'silent' });
const SOME_ID = '6f1c2d3e-1111-4222-8333-444455556666';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function refusedOn(field: string) {
  return { code: 'FERRY_VALIDATION_FAILED', retriable: false, field, batchWide: false };
}

async function endedPool(): Promise<Pool> {
  const pool = new Pool({ connectionString: t.url });
  await pool.end();
  return pool;
}

it('refuses a pool ended before it was given, naming the argument that carried it', async () => {
  const pool = await endedPool();
  expect({
    fromPg: await failure(() => fromPg(pool)),
    pgTransactions: await failure(() => pgTransactions(pool)),
    outboxAdmin: await failure(() => createOutboxAdmin(pool)),
    inboxAdmin: await failure(() => new InboxAdmin(pool)),
    auditLog: await failure(() => createAuditLog(pool)),
    emit: await failure(() => emit(pool, { type: 'ended.pool', payload: {} })),
  }).toEqual({
    fromPg: refusedOn('pool'),
    pgTransactions: refusedOn('pool'),
    outboxAdmin: refusedOn('client'),
    inboxAdmin: refusedOn('client'),
    auditLog: refusedOn('executor'),
    emit: refusedOn('tx'),
  });
});

it('fails every later call with FERRY_CLOSED naming the argument once the pool is ended', async () => {
  const pool = new Pool({ connectionString: t.url });
  const db = fromPg(pool);
  const outboxAdmin = createOutboxAdmin(pool);
  const inboxAdmin = new InboxAdmin(pool).forGlobal();
  const auditLog = createAuditLog(pool);
  const relay = createRelay({ db, publisher: new InMemoryPublisher(), logger: quiet });
  const inbox = new Inbox(pgTransactions(pool), {
    logger: quiet,
    global: 'shared',
    handlers: { w: async () => {} },
  });
  await pool.end();
  try {
    expect({
      statement: await failure(() => db.query('SELECT 1')),
      transaction: await failure(() => db.transaction((tx) => tx.query('SELECT 1'))),
      outboxList: await failure(() => outboxAdmin.list()),
      outboxRetry: await failure(() => outboxAdmin.retry(SOME_ID, { actor: 'ops' })),
      inboxRequeue: await failure(() =>
        inboxAdmin.requeue({ id: SOME_ID, expectedVersion: 1, actor: 'ops', reason: 'fixed' }),
      ),
      auditList: await failure(() => auditLog.list()),
      relay: await failure(() => relay.runOnce()),
      accept: await failure(() =>
        inbox.accept({ consumer: 'w', messageId: 'm-1', tenantId: null, payload: {} }),
      ),
    }).toEqual({
      statement: closed('pool'),
      transaction: closed('pool'),
      outboxList: closed('client'),
      outboxRetry: closed('client'),
      inboxRequeue: closed('client'),
      auditList: closed('executor'),
      relay: closed('pool'),
      accept: closed('pool'),
    });
  } finally {
    await relay.close();
    await inbox.close();
  }
});

it('fails with FERRY_CLOSED through Kysely and Prisma on an ended pool', async () => {
  const kyselyPool = new Pool({ connectionString: t.url });
  const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: kyselyPool }) });
  const prismaPool = new Pool({ connectionString: t.url });
  for (const pool of [kyselyPool, prismaPool]) pool.on('error', () => undefined);
  const prisma = prismaOnPool(prismaPool);
  const inbox = new Inbox(kyselyTransactions(kysely), {
    logger: quiet,
    global: 'shared',
    handlers: { w: async () => {} },
  });
  // Used once (Kysely ends its pool on destroy() only when it was used), then ended.
  await createOutboxAdmin(kysely).list();
  await createOutboxAdmin(prisma).list();
  await kysely.destroy();
  await prismaPool.end();
  try {
    expect({
      kyselyAdmin: await failure(() => createOutboxAdmin(kysely).list()),
      kyselyAccept: await failure(() =>
        inbox.accept({ consumer: 'w', messageId: 'm-2', tenantId: null, payload: {} }),
      ),
      prismaAdmin: await failure(() => createOutboxAdmin(prisma).list()),
    }).toEqual({ kyselyAdmin: closed(), kyselyAccept: closed(), prismaAdmin: closed() });
  } finally {
    await inbox.close();
    await prisma.$disconnect();
  }
});
