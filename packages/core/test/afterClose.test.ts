/**
 * Once close() of the relay or of the inbox's worker resolved, nothing of it runs any more
 * (watchAfterClose: no timer of it fires, no connection of it opens, no log line, no event), also
 * when close() came during a backoff: the relay's circuit open (its publisher unavailable), the
 * relay's polls failing on a database that does not answer, the worker's claims failing on one.
 * The pools are the application's (made outside the watched object), closed by the test after.
 */
import { Pool } from 'pg';
import { createRelay, emit, fromPg, pgTransactions, type InboxEvent, type OutboxEvent } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { closedPort } from '../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { NOTHING_AFTER_CLOSE, watchAfterClose, type AfterClose } from '../../../test-support/afterClose';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { waitFor } from './outbox/helpers';
import { makeInbox } from './inbox/helpers';

failOnUnhandledRejections();
jest.setTimeout(60_000);

/** Longer than any wait of the objects here: the watch ends earlier, once no timer of the object is pending. */
const WATCHED = { deadlineMs: 20_000, windowMs: 8_000 };
/** Backoffs of a few hundred ms: close() comes during one. */
const RETRY = { initialDelay: 200, maxDelay: 400 };

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A pool of the application's to a port nothing listens on: every connect is refused. */
async function unreachablePool(): Promise<Pool> {
  const pool = new Pool({ host: '127.0.0.1', port: await closedPort(), user: 'postgres', database: 'test' });
  pool.on('error', () => undefined);
  return pool;
}

test('the relay closed while its circuit is open (its publisher unavailable)', async () => {
  await emit(t.db, { type: 'after-close.unavailable', payload: {} });
  const watch = watchAfterClose();
  const events: OutboxEvent[] = [];
  try {
    const relay = watch.own(() =>
      createRelay({
        db: t.db,
        publisher: new InMemoryPublisher({ decide: () => ({ unavailable: 'down' }) }),
        logger: watch.logger,
        options: { pollInterval: 50, retry: RETRY },
        observer: watch.observer((event: OutboxEvent) => events.push(event)),
      }),
    );
    watch.own(() => relay.start());
    await waitFor(() => events.some((event) => event.type === 'circuit-opened'));
    expect(await watch.close(() => relay.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
  } finally {
    watch.stop();
    await t.db.execute('DELETE FROM outbox_events');
  }
});

/**
 * Makes the object (`make`, as the watched one's) on a pool to an unreachable database, starts it,
 * closes it once it tried the database twice, and expects nothing of it after close().
 */
async function closedWhileUnreachable(
  make: (pool: Pool, watch: AfterClose) => { start(): void; close(): Promise<void> },
): Promise<void> {
  const pool = await unreachablePool();
  const watch = watchAfterClose();
  try {
    const owner = watch.own(() => make(pool, watch));
    watch.own(() => owner.start());
    await waitFor(() => watch.connects() >= 2);
    expect(await watch.close(() => owner.close(), WATCHED)).toEqual(NOTHING_AFTER_CLOSE);
  } finally {
    watch.stop();
    await pool.end();
  }
}

test('the relay closed while its polls fail on a database that does not answer', () =>
  closedWhileUnreachable((pool, watch) =>
    createRelay({
      db: fromPg(pool),
      publisher: new InMemoryPublisher(),
      logger: watch.logger,
      options: { pollInterval: 50, retry: RETRY },
      observer: watch.observer<OutboxEvent>(),
    }),
  ));

test("the inbox's worker closed while its claims fail on a database that does not answer", () =>
  closedWhileUnreachable((pool, watch) =>
    makeInbox(pgTransactions(pool), {
      logger: watch.logger,
      observer: watch.observer<InboxEvent>(),
      handlers: { orders: async () => undefined } as never,
      worker: { retryBaseMs: 200, retryMaxMs: 400 },
    }),
  ));
