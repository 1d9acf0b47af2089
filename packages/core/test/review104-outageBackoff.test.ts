/**
 * Review 104 (hostile review of review 103's give-back of a handler transaction without a session).
 *
 * 1. An outage of the application's pool that lasts (a database that does not exist, a role the
 *    server refuses, an application pool that was ended while ferry's own statements run on
 *    another): on main each claim was given back due after the backoff of its attempt, which the
 *    give-back returns, so the delay never grew: every receipt was claimed again and failed, a
 *    connection attempt and a warning each, about once per retryBaseMs for ever (200 receipts on a
 *    database that does not exist: 285 give-backs and warnings in 5 s). What should happen: as
 *    the inbox's failed claims back off, a claim given back once the outage has lasted a while is
 *    due after up to as long as it has lasted (at most retryMaxMs); the first one after a handler
 *    transaction got a session again is due after its attempt's backoff, as before.
 * 2. sessionGone reads an untranslated error as its translation would be: FERRY_CLOSED (the
 *    application ended its pool, destroyed its Kysely instance) is a session gone once translated,
 *    but on main the driver's own error for it ("Cannot use a pool after calling end on the
 *    pool", "driver has already been destroyed"), as Kysely and Prisma's adapter throw it, was not.
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, pgTransactions, type InboxEvent, type TransactionAdapter } from '@ferry/core';
import type { PoolClient } from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { sessionGone, translateDbError } from '../src/sql/dbErrors';
import { makeInbox, message, receiptRow } from './inbox/helpers';

jest.setTimeout(60_000);

describe('sessionGone on an untranslated error', () => {
  it.each([
    'Cannot use a pool after calling end on the pool',
    'Client was closed and is not queryable',
    'driver has already been destroyed',
    'Connection terminated',
  ])('reads %j as its translation (FERRY_CLOSED) is read', (text) => {
    const raw = new Error(text);
    const translated = translateDbError(raw, 'test');
    expect({ code: translated.code, gone: sessionGone(translated), raw: sessionGone(raw) }).toEqual({
      code: 'FERRY_CLOSED',
      gone: true,
      raw: true,
    });
  });
});

describe('a lasting outage of the application pool', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  /** How many ms from now the receipt is due. */
  async function dueInMs(id: string): Promise<number> {
    const [row] = await t.db.query<{ due_in_ms: number }>(
      'SELECT (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [id],
    );
    return row!.due_in_ms;
  }

  async function dueNow(id: string): Promise<void> {
    const wait = await dueInMs(id);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 20));
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('gives claims back due later the longer it lasts, and at their backoff again once a session began', async () => {
    const appPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const real = pgTransactions(appPool);
    let down = true;
    // The application's pool refusing sessions (the database does not exist), as pg throws it.
    const refused = Object.assign(new Error('database "gone_review104" does not exist'), { code: '3D000' });
    const adapter: TransactionAdapter<PoolClient> = {
      ...real,
      db: fromPg(ferryPool),
      transaction: (work, options) => (down ? Promise.reject(refused) : real.transaction(work, options)),
    };
    const events: InboxEvent[] = [];
    try {
      const inbox = makeInbox(adapter, {
        // The full ceiling each time: the due times say the ceilings.
        random: () => 0.999,
        worker: { concurrency: 1, maxAttempts: 1, retryBaseMs: 100, retryMaxMs: 60_000 },
        handlers: {
          orders: async () => {
            throw new Error('handler fails: charged, as ever');
          },
        } as never,
        observer: (event: InboxEvent) => void events.push(event),
      });
      const { record } = await inbox.accept(message());
      await inbox.runOnce();
      const first = await dueInMs(record.id);
      // The outage goes on for two seconds more.
      await sleep(2_000);
      await dueNow(record.id);
      await inbox.runOnce();
      const second = await dueInMs(record.id);
      const row = await receiptRow(t, record.id);
      expect({
        first: first <= 100,
        second: second > 1_500,
        status: row.status,
        attempts: row.attempts,
      }).toEqual({ first: true, second: true, status: 'PENDING', attempts: 0 });

      // A handler transaction that began ends the outage: the next give-back is at its backoff.
      await t.db.execute('UPDATE ferry_inbox_receipts SET next_attempt_at = now() WHERE id = $1::uuid', [
        record.id,
      ]);
      const other = await inbox.accept(message());
      await t.db.execute(
        "UPDATE ferry_inbox_receipts SET next_attempt_at = now() + interval '1 hour' WHERE id = $1::uuid",
        [other.record.id],
      );
      down = false;
      await inbox.runOnce();
      expect((await receiptRow(t, record.id)).status).toBe('DEAD');
      down = true;
      await t.db.execute('UPDATE ferry_inbox_receipts SET next_attempt_at = now() WHERE id = $1::uuid', [
        other.record.id,
      ]);
      await inbox.runOnce();
      expect(await dueInMs(other.record.id)).toBeLessThanOrEqual(100);
      await inbox.close();
    } finally {
      await appPool.end();
      await ferryPool.end();
    }
  });
});
