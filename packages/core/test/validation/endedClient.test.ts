/**
 * A node-postgres `Client` (not a pool) given to ferry, then ended by the application (`end()`):
 * it can never run a statement again, so, as an ended pool (endedPool.test.ts), every later call
 * fails with FERRY_CLOSED, not retriable, a batch-wide failure, naming the argument that carried
 * the client (`details.field`). On HEAD the admins and the audit log said FERRY_VALIDATION_FAILED
 * (taken for a client handed over ended) and an executor made by fromPg said a retriable
 * FERRY_DATABASE_ERROR ("Client was closed and is not queryable", logged as unclassified), which a
 * caller's retry loop retries for ever. A client ended before it is given stays refused with
 * FERRY_VALIDATION_FAILED (closedClientEmit.test.ts).
 */
import type { Client, Pool } from 'pg';
import pino from 'pino';
import { createAuditLog, createEmitter, createOutboxAdmin, fromPg, InboxAdmin } from '@ferry/core';
import { closed, connectedClient, failure } from '../../../../test-support/endedConnections';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const SOME_ID = '6f1c2d3e-1111-4222-8333-444455556666';
const emitter = createEmitter({ logger: pino({ level: 'silent' }) });

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** fromPg is typed for a pool; a `Client` is what an application gives too (pgTransactions refuses one: pgTransactionsClient.test.ts). */
const asPool = (client: Client): Pool => client as unknown as Pool;

it('fromPg on a client: each statement and transaction fails with FERRY_CLOSED once the client is ended', async () => {
  const client = await connectedClient(t.url);
  const db = fromPg(asPool(client));
  await client.end();
  expect({
    statement: await failure(() => db.query('SELECT 1')),
    execute: await failure(() => db.execute('SELECT 1')),
    transaction: await failure(() => db.transaction((tx) => tx.query('SELECT 1'))),
  }).toEqual({ statement: closed('pool'), execute: closed('pool'), transaction: closed('pool') });
});

it('the admins on a client: each call fails with FERRY_CLOSED naming client once the client is ended', async () => {
  const client = await connectedClient(t.url);
  const outboxAdmin = createOutboxAdmin(client);
  const inboxAdmin = new InboxAdmin(client).forGlobal();
  const onExecutor = createOutboxAdmin(fromPg(asPool(client)));
  await client.end();
  expect({
    outboxList: await failure(() => outboxAdmin.list()),
    outboxRetry: await failure(() => outboxAdmin.retry(SOME_ID, { actor: 'ops' })),
    inboxList: await failure(() => inboxAdmin.list()),
    inboxRequeue: await failure(() =>
      inboxAdmin.requeue({ id: SOME_ID, expectedVersion: 1, actor: 'ops', reason: 'fixed' }),
    ),
    onExecutor: await failure(() => onExecutor.list()),
  }).toEqual({
    outboxList: closed('client'),
    outboxRetry: closed('client'),
    inboxList: closed('client'),
    inboxRequeue: closed('client'),
    onExecutor: closed('pool'),
  });
});

it('the audit log on a client: a read fails with FERRY_CLOSED naming executor once the client is ended', async () => {
  const client = await connectedClient(t.url);
  const auditLog = createAuditLog(client);
  const onExecutor = createAuditLog(fromPg(asPool(client)));
  await client.end();
  expect({
    list: await failure(() => auditLog.list()),
    onExecutor: await failure(() => onExecutor.list()),
  }).toEqual({ list: closed('executor'), onExecutor: closed('pool') });
});

it('the emitter on an executor made on a client: emit fails with FERRY_CLOSED once the client is ended', async () => {
  const client = await connectedClient(t.url);
  const db = fromPg(asPool(client));
  await client.end();
  expect({
    emit: await failure(() => emitter.emit(db, { type: 'ended.client', payload: {} })),
    emitMany: await failure(() => emitter.emitMany(db, [{ type: 'ended.client', payload: {} }])),
  }).toEqual({ emit: closed('pool'), emitMany: closed('pool') });
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'ended.client'`,
  );
  expect(row?.n).toBe(0);
});
