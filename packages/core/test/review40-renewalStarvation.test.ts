/**
 * Review 40 (failed first): lease renewals starved by the handlers they keep alive.
 *
 * On `pgTransactions(pool)` ferry's own statements (claims, lease renewals, the failure path)
 * run on `fromPg(pool)`, the pool the handler transactions hold their connections from. With
 * `worker.concurrency` equal to the pool's `max` (one connection per lane, a natural sizing that
 * nothing refuses, warns about or documents against), every connection is held by a running
 * handler, so each renewal waits for a connection until its deadline (one heartbeat interval),
 * fails, and after `leaseMs − heartbeatIntervalMs` the lease counts as lost: the handler's signal
 * aborts and its transaction is rolled back, although the database is healthy and the handler is
 * well within `transactionTimeoutMs`. Every attempt of every handler longer than that fails the
 * same way, so the receipts go DEAD ("exhausted") without a fault of theirs: heartbeats exist so
 * that handlers may run longer than the lease, and exactly those can never complete.
 *
 * Answered with a warning and documentation, not a refusal (the spec: "Provision pool connections
 * for admission, heartbeats, and control queries in addition to handler transactions"; small
 * pools are legitimate for short handlers): an Inbox on `pgTransactions(pool)` whose
 * `worker.concurrency` is not below the pool's `max` logs a warning naming `worker.concurrency`
 * when its worker starts or runs; the review's case runs with one connection more, where it
 * passes. Renewals on a connection of their own (the review's first direction) are not built.
 * The review's fix direction: renew the running claims on a connection the handlers cannot take (a dedicated
 * client, as the LISTEN connection is), or refuse / warn at configuration when the adapter's pool
 * cannot hold `concurrency` handler transactions plus ferry's own statements (pg's
 * `pool.options.max`), and document the sizing rule.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './inbox/helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

let t: TestDatabase;
let pool: Pool;
let roomier: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  // One connection per lane.
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  // One connection more than the lanes: ferry's own statements have one.
  roomier = listened(new Pool({ connectionString: t.url, max: 3 }));
});
afterAll(async () => {
  await pool.end();
  await roomier.end();
  await t.drop();
});

const WORKER = {
  concurrency: 2,
  prefetch: 0,
  leaseMs: 1_000,
  heartbeatIntervalMs: 200,
  transactionTimeoutMs: 8_000,
  maxAttempts: 3,
} as const;

describe('review40: handlers holding every connection of the pool ferry renews their leases on', () => {
  it('warns, naming worker.concurrency, when the pool holds no more connections than the lanes', async () => {
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (fields: unknown, message?: string) =>
        void warnings.push(`${message ?? ''} ${JSON.stringify(fields)}`),
      error: () => undefined,
    };
    const inbox = makeInbox(pgTransactions(pool), {
      logger,
      worker: WORKER,
      handlers: { slow: async () => undefined },
    });
    await inbox.runOnce();
    await inbox.runOnce();
    const sizing = warnings.filter((line) => line.includes('worker.concurrency'));
    expect(sizing).toHaveLength(1);
    expect(sizing[0]).toMatch(/the pool holds 2 connections/);
    // With one connection more: no warning.
    const roomy: string[] = [];
    const quiet = makeInbox(pgTransactions(roomier), {
      logger: { ...logger, warn: (_fields: unknown, message?: string) => void roomy.push(message ?? '') },
      worker: WORKER,
      handlers: { slow: async () => undefined },
    });
    await quiet.runOnce();
    expect(roomy.filter((line) => line.includes('worker.concurrency'))).toEqual([]);
  });

  it('complete when they run longer than a lease but well within transactionTimeoutMs, with one connection more', async () => {
    const inbox = makeInbox(pgTransactions(roomier), {
      worker: WORKER,
      handlers: {
        slow: async (_payload, context) => {
          await context.tx.query(INSERT, [context.receiptId, `attempt ${context.attempt}`]);
          // Longer than the lease (the heartbeat keeps it), far shorter than the transaction's limit.
          await sleep(1_800);
        },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) ids.push((await inbox.accept(message({ consumer: 'slow' }))).record.id);
    const result = await inbox.runOnce();
    const rows = await Promise.all(ids.map((id) => receiptRow(t, id)));
    expect({
      result,
      statuses: rows.map((row) => row.status),
      errors: rows.map((row) => row.last_error),
    }).toMatchObject({ result: { claimed: 2, completed: 2 }, statuses: ['COMPLETED', 'COMPLETED'] });
    for (const id of ids) expect(await businessCount(t, id)).toBe(1);
  }, 60_000);
});
