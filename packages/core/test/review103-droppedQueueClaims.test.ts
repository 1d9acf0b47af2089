/**
 * Review 103 (the inbox worker's claim queue, ClaimQueue): a claim taken and then never run is
 * given back, its attempt returned, as close() gives back the queue and review 102 gives back a
 * receipt shutdown interrupted before its handler started.
 *
 * What I did: claimed a receipt of worker.maxAttempts 1 into the queue, then took from the queue at
 * a local time past what its lease can be proven for (leaseMs - heartbeatIntervalMs without a
 * renewal: an event loop a CPU-bound handler blocked, renewals that failed), while the database
 * still held the claim, unexpired, under its token.
 *
 * What happened on main: the queue dropped the batch (right: it must not start a claim it cannot
 * prove) and left its rows to their lease: PROCESSING with the only attempt spent although no
 * handler ran, which the next sweep made DEAD ("attempts exhausted").
 *
 * What should happen: the dropped rows are given back under their claim token (releaseClaims:
 * PENDING, attempts 0, no lease) before release() (close()) resolves; a row the database no
 * longer holds under that token, or whose lease expired there, is left alone (the fence).
 */
import type { InboxEvent } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { ClaimQueue } from '../src/inbox/claimQueue';
import type { ProcessDeps } from '../src/inbox/process';
import { claimReceipts } from '../src/inbox/sql/claim';
import { makeInbox, message, receiptRow, sqlProcessDeps } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const WORKER = { maxAttempts: 1, leaseMs: 60_000, heartbeatIntervalMs: 1_000 };

function queueDeps(consumer: string, events: InboxEvent[]): ProcessDeps<unknown> {
  const handlers = { [consumer]: async () => undefined };
  return sqlProcessDeps(t, { worker: WORKER, handlers, observer: (event) => void events.push(event) });
}

it('a queued batch whose lease can no longer be proven locally gives its claims back, their attempt returned', async () => {
  const inbox = makeInbox(t.prisma, { worker: WORKER, handlers: { dropped: async () => undefined } });
  const { record } = await inbox.accept(message({ consumer: 'dropped' }));
  const events: InboxEvent[] = [];
  const queue = new ClaimQueue(queueDeps('dropped', events));
  const claimedAt = performance.now();
  const claimed = await claimReceipts(t.db, ['dropped'], 1, WORKER.leaseMs, WORKER.maxAttempts);
  expect(claimed.map((r) => r.id)).toEqual([record.id]);
  queue.add(claimed, claimedAt);
  // Later than the lease can be proven without a renewal: the batch is dropped, nothing starts.
  expect(queue.take(claimedAt + WORKER.leaseMs)).toBeUndefined();
  await queue.release();
  const row = await receiptRow(t, record.id);
  expect({ status: row.status, attempts: row.attempts, lease: row.lease_expires_at }).toEqual({
    status: 'PENDING',
    attempts: 0,
    lease: null,
  });
  expect(events.filter((e) => e.type === 'lease-lost').map((e) => 'receiptId' in e && e.receiptId)).toEqual([
    record.id,
  ]);
});

it('a dropped claim the database no longer holds under its token is left alone', async () => {
  const inbox = makeInbox(t.prisma, { worker: WORKER, handlers: { takenOver: async () => undefined } });
  const { record } = await inbox.accept(message({ consumer: 'takenOver' }));
  const queue = new ClaimQueue(queueDeps('takenOver', []));
  const claimedAt = performance.now();
  const [claim] = await claimReceipts(t.db, ['takenOver'], 1, WORKER.leaseMs, WORKER.maxAttempts);
  // Taken over meanwhile (its lease recovered by another worker): a new token on the row.
  const stale = { ...claim!, claimToken: '00000000-0000-4000-8000-000000000000' };
  queue.add([stale], claimedAt);
  expect(queue.take(claimedAt + WORKER.leaseMs)).toBeUndefined();
  await queue.release();
  const row = await receiptRow(t, record.id);
  expect({ status: row.status, attempts: row.attempts, token: row.claim_token }).toEqual({
    status: 'PROCESSING',
    attempts: 1,
    token: claim!.claimToken,
  });
});
