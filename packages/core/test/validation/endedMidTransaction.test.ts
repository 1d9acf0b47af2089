/**
 * A node-postgres client or pool the application ends while ferry is in the middle of its work: a
 * transaction between two statements, or a statement not yet answered. node-postgres then fails
 * the next statement with "Client was closed and is not queryable" and the one in flight with
 * "Connection terminated" (the text it gives when end() was called; a connection the server ended
 * is "Connection terminated unexpectedly"). Neither client will ever answer again, so, as a call
 * on a client or pool ended before it (endedClient.test.ts, endedPool.test.ts), each fails with
 * FERRY_CLOSED: not retriable, a batch-wide failure, pg's error as the `cause`. On HEAD the first
 * was a retriable FERRY_DATABASE_ERROR logged as unclassified, the second a retriable
 * FERRY_DATABASE_UNAVAILABLE: a caller's retry loop went round for ever.
 *
 * A pool ended meanwhile (`pool.end()`) ends no connection that is checked out: node-postgres ends
 * it when it is released. So a transaction on a pool's connection (an outbox write in
 * pgTransactions, an inbox handler) runs to its end and commits; ferry's next call on the pool
 * fails with FERRY_CLOSED.
 */
import { Pool, type PoolClient } from 'pg';
import pino from 'pino';
import {
  createEmitter,
  fromPg,
  isFerryError,
  pgTransactions,
  prismaTransactions,
  type InboxEvent,
} from '@ferry/core';
import { closed, connectedClient, endsAt, failure } from '../../../../test-support/endedConnections';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { FAST_WORKER, latch, makeInbox, message } from '../inbox/helpers';

const quiet = pino({ level: 'silent' });
const emitter = createEmitter({ logger: quiet });

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The error `work` fails with (undefined when it does not). */
async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  return work().then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** What an error tells a caller: its code, retriable, batch-wide, and the message of its cause. */
async function closedWith(work: () => Promise<unknown>): Promise<unknown> {
  const error = await errorOf(work);
  return {
    failure: await failure(() => Promise.reject(error)),
    cause: isFerryError(error) ? (error.cause as Error | undefined)?.message : String(error),
  };
}

async function eventsOfType(type: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_events WHERE event_type = $1',
    [type],
  );
  return row?.n ?? -1;
}

it("emit on an idle client ended between the statements of emit's own transaction: FERRY_CLOSED, nothing written", async () => {
  const client = await connectedClient(t.url);
  // BEGIN answered, then the application ends the client: the INSERT finds it closed.
  endsAt(client, 'after', /^\s*BEGIN/i);
  expect(
    await closedWith(() => emitter.emit(client, { type: 'ended.between', payload: {}, orderingKey: 'k' })),
  ).toEqual({ failure: closed(), cause: 'Client was closed and is not queryable' });
  expect(await eventsOfType('ended.between')).toBe(0);
});

it("emit inside the application's transaction, the client ended while emit's insert is in flight: FERRY_CLOSED", async () => {
  const client = await connectedClient(t.url);
  await client.query('BEGIN');
  endsAt(client, 'during', /outbox_events/);
  expect(await closedWith(() => emitter.emit(client, { type: 'ended.during', payload: {} }))).toEqual({
    failure: closed(),
    cause: 'Connection terminated',
  });
  expect(await eventsOfType('ended.during')).toBe(0);
});

it('a transaction of fromPg on a client ended between its statements: emit in it fails with FERRY_CLOSED', async () => {
  const client = await connectedClient(t.url);
  const db = fromPg(client as unknown as Pool);
  const outcome = await closedWith(() =>
    db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await client.end();
      await emitter.emit(tx, { type: 'ended.fromPg', payload: {} });
    }),
  );
  expect(outcome).toEqual({ failure: closed(), cause: 'Client was closed and is not queryable' });
});

it("inbox acceptance on a client ended while its statement is in flight: FERRY_CLOSED, the whole batch's", async () => {
  const client = await connectedClient(t.url);
  const inbox = makeInbox(prismaTransactions(t.prisma, { db: fromPg(client as unknown as Pool) }), {
    logger: quiet,
    handlers: { orders: async () => undefined },
  });
  endsAt(client, 'during', /ferry_inbox_receipts/);
  expect(await closedWith(() => inbox.accept(message()))).toEqual({
    failure: closed(),
    cause: 'Connection terminated',
  });
  // Ended: every later call says so, naming the argument that carried the client.
  expect(await failure(() => inbox.accept(message()))).toEqual(closed('pool'));
});

it('an outbox write in pgTransactions with the pool ended between its statements commits; the next write fails with FERRY_CLOSED', async () => {
  const pool = new Pool({ connectionString: t.url, max: 2 });
  pool.on('error', () => undefined);
  const adapter = pgTransactions(pool);
  let ending: Promise<void> | undefined;
  await adapter.transaction(async (client: PoolClient) => {
    await emitter.emit(client, { type: 'pool.ended.between', payload: { n: 1 } });
    ending = pool.end(); // settles once this transaction's connection is released
    await emitter.emit(client, { type: 'pool.ended.between', payload: { n: 2 } });
  });
  await ending;
  expect(await eventsOfType('pool.ended.between')).toBe(2);
  expect({
    emit: await failure(() => emitter.emit(adapter.db, { type: 'pool.ended.after', payload: {} })),
    transaction: await failure(() => adapter.transaction(async () => undefined)),
  }).toEqual({ emit: closed('pool'), transaction: closed('pool') });
});

it('an inbox handler transaction in pgTransactions with the pool ended between its statements completes; the next acceptance fails with FERRY_CLOSED', async () => {
  const pool = new Pool({ connectionString: t.url, max: 4 });
  pool.on('error', () => undefined);
  const events: InboxEvent[] = [];
  const handling = latch();
  const resume = latch();
  const inbox = makeInbox(pgTransactions(pool), {
    logger: quiet,
    observer: (event) => void events.push(event),
    worker: { ...FAST_WORKER, concurrency: 1 },
    handlers: {
      orders: async (_payload, { tx }) => {
        await tx.query('SELECT 1');
        handling.open();
        await resume.promise;
        await emitter.emit(tx, { type: 'handler.pool.ended', payload: {} });
      },
    },
  });
  await inbox.accept(message());
  const run = inbox.runOnce();
  await handling.promise;
  const ending = pool.end();
  resume.open();
  await run;
  await ending;
  expect(events.map((event) => event.type)).toContain('completed');
  expect(events.filter((event) => event.type === 'infrastructure-error')).toEqual([]);
  expect(await eventsOfType('handler.pool.ended')).toBe(1);
  expect(await failure(() => inbox.accept(message()))).toEqual(closed('pool'));
});
