/**
 * Review 156: a relay and an inbox worker run for months. Nothing they listen to or keep may grow
 * with the events relayed or the receipts processed: the listeners on the pg Pool and its clients,
 * on the relay's and the worker's shutdown signals, and the collections they keep of the work in
 * flight read the same after N and after 2N (the publisher: @ferry/testing's InMemoryPublisher;
 * the transports' own publishers: their review156 tests).
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Pool } from 'pg';
import { createRelay, emitMany, fromPg, pgTransactions, type Relay } from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { listened } from '../../../test-support/oneStatement';
import { makeInbox, message, quietLogger } from './inbox/helpers';

/** Receipts per round (a handler transaction each); events per round are RELAY_N (batches of 50). */
const N = 300;
const RELAY_N = 1_000;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** Every listener a pool and its clients hold, by emitter and event. */
function poolListeners(pool: Pool): Record<string, number> {
  const counts: Record<string, number> = {};
  const add = (prefix: string, emitter: NodeJS.EventEmitter): void => {
    for (const event of emitter.eventNames()) {
      const key = `${prefix} ${String(event)}`;
      counts[key] = Math.max(counts[key] ?? 0, emitter.listenerCount(event));
    }
  };
  add('pool', pool);
  for (const client of (pool as unknown as { _clients: NodeJS.EventEmitter[] })._clients)
    add('client', client);
  return counts;
}

/** `read()` at a moment `idle()` holds (checked in the same turn), once it does. */
async function between<T>(idle: () => boolean, read: () => T): Promise<T> {
  let value: T | undefined;
  await waitUntil(
    'a moment with nothing in flight',
    () => {
      if (!idle()) return false;
      value = read();
      return true;
    },
    { intervalMs: 1 },
  );
  return value as T;
}

async function count(sql: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(sql);
  return row?.n ?? -1;
}

test(`a relay keeps nothing per event: the same after ${RELAY_N} events as after ${2 * RELAY_N}`, async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 4, idleTimeoutMillis: 0 }));
  const db = fromPg(pool);
  const publisher = new InMemoryPublisher();
  const relay: Relay = createRelay({
    db,
    publisher,
    logger: quietLogger,
    options: { batchSize: 50, pollInterval: 10 },
  });
  const internals = relay as unknown as { hardStop: AbortController; active: Set<unknown> };
  // Read between two cycles (none active), so that a cycle in flight is not taken for growth.
  const snapshot = () =>
    between(
      () => internals.active.size === 0,
      () => ({
        pool: poolListeners(pool),
        hardStop: getEventListeners(internals.hardStop.signal, 'abort').length,
      }),
    );
  const relayed = async (total: number): Promise<void> => {
    await emitMany(
      db,
      Array.from({ length: RELAY_N }, (_, i) => ({ type: 'long.run', payload: { i: total - RELAY_N + i } })),
    );
    await waitUntil(
      `${total} events sent`,
      async () =>
        (await count(`SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`)) === total,
    );
  };
  relay.start();
  try {
    await relayed(RELAY_N);
    const afterN = await snapshot();
    await relayed(2 * RELAY_N);
    expect(await snapshot()).toEqual(afterN);
  } finally {
    await relay.close();
    await pool.end();
  }
});

test(`an inbox worker keeps nothing per receipt: the same after ${N} receipts as after ${2 * N}`, async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 6, idleTimeoutMillis: 0 }));
  const inbox = makeInbox(pgTransactions(pool), {
    handlers: { longRun: async () => undefined },
    worker: { enabled: true, concurrency: 4, pollIntervalMs: 10 },
  });
  const worker = (inbox as unknown as { worker: Record<string, unknown> }).worker as {
    shutdown: AbortController;
    inflight: Set<unknown>;
    active: Set<unknown>;
    claiming: Set<unknown>;
  };
  // Read between two polls (nothing in flight), so that a claim in flight is not taken for growth.
  const snapshot = () =>
    between(
      () => worker.inflight.size + worker.active.size + worker.claiming.size === 0,
      () => ({
        pool: poolListeners(pool),
        shutdown: getEventListeners(worker.shutdown.signal, 'abort').length,
      }),
    );
  const processed = async (total: number): Promise<void> => {
    const results = await inbox.acceptMany(
      Array.from({ length: N }, (_, i) => message({ consumer: 'longRun', payload: { n: total - N + i } })),
    );
    expect(results.every((result) => result.kind === 'accepted')).toBe(true);
    await waitUntil(
      `${total} receipts completed`,
      async () =>
        (await count(`SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status = 'COMPLETED'`)) ===
        total,
    );
  };
  inbox.start();
  try {
    await processed(N);
    const afterN = await snapshot();
    await processed(2 * N);
    expect(await snapshot()).toEqual(afterN);
  } finally {
    await inbox.close();
    await pool.end();
  }
});
