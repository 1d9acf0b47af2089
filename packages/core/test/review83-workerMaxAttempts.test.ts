/**
 * Review 83: `worker.maxAttempts` is a worker option ("claims per retry cycle, including the first
 * attempt and crashes"; "exhausted attempts become DEAD"), and docs/inbox.md describes the
 * acceptance-only inbox "whose workers run in other processes". But the budget a worker applies is
 * the one the *accepting* inbox wrote into the row (accept.ts stores settings.maxAttempts as
 * max_attempts; process.ts deadReason and the claim's `attempts < max_attempts` read the row), so
 * the worker's own maxAttempts is ignored: a worker configured with maxAttempts: 2 runs a failing
 * handler 8 times (the acceptance-only inbox's default) before DEAD. And the operator's recovery
 * the spec describes ("Requeue ... resetting the current retry-cycle budget" after "Handler
 * corrected and deployed") keeps the budget the receipt was accepted with: raising maxAttempts
 * for a flaky downstream and requeueing gives the receipt one attempt, not the new three (requeue
 * resets `attempts` but not the row's max_attempts; sql/requeueDead.ts).
 */
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it("a worker's maxAttempts bounds the claims of a receipt an acceptance-only inbox accepted", async () => {
  // The transport process: an acceptance-only inbox (no handlers), defaults.
  const acceptor = makeInbox(t.prisma);
  const { record } = await acceptor.accept(message({ consumer: 'billing' }));

  // The worker process: maxAttempts 2.
  let runs = 0;
  const worker = makeInbox(t.prisma, {
    worker: { maxAttempts: 2, retryBaseMs: 1, retryMaxMs: 1 },
    handlers: {
      billing: async () => {
        runs += 1;
        throw new Error('downstream refused');
      },
    },
  });
  // Bounded: at most 10 rounds (each runOnce claims what is due: retries are due after 1 ms).
  for (let round = 0; round < 10; round += 1) {
    const row = await receiptRow(t, record.id);
    if (row.status === 'DEAD') break;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.runOnce();
  }
  const row = await receiptRow(t, record.id);
  // Received: { runs: 8, status: 'DEAD', attempts: 8 } (the acceptor's default budget).
  expect({ runs, status: row.status, attempts: row.attempts }).toEqual({
    runs: 2,
    status: 'DEAD',
    attempts: 2,
  });
});

it('a requeue after redeploying with a larger maxAttempts gets the new retry-cycle budget', async () => {
  // Version 1: maxAttempts 1, the handler is broken; the receipt goes DEAD.
  const v1 = makeInbox(t.prisma, {
    worker: { maxAttempts: 1 },
    handlers: {
      billing: async () => {
        throw new Error('downstream refused');
      },
    },
  });
  const { record } = await v1.accept(message({ consumer: 'billing' }));
  await v1.runOnce();
  await v1.close();
  const dead = await receiptRow(t, record.id);
  expect(dead.status).toBe('DEAD');

  // Version 2: maxAttempts 3 for a flaky downstream (fails twice, then succeeds); requeued.
  let calls = 0;
  const v2 = makeInbox(t.prisma, {
    worker: { maxAttempts: 3, retryBaseMs: 1, retryMaxMs: 1 },
    handlers: {
      billing: async () => {
        calls += 1;
        if (calls <= 2) throw new Error('downstream busy');
      },
    },
  });
  await new InboxAdmin(t.prisma).forTenant('acme').requeue({
    id: record.id,
    expectedVersion: Number(dead.row_version),
    reason: 'retry budget raised and deployed',
    actor: 'ops',
  });
  for (let round = 0; round < 10; round += 1) {
    const status = (await receiptRow(t, record.id)).status;
    if (status === 'DEAD' || status === 'COMPLETED') break;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await v2.runOnce();
  }
  const row = await receiptRow(t, record.id);
  // Received: { calls: 1, status: 'DEAD' } (the row's max_attempts is still 1).
  expect({ calls, status: row.status }).toEqual({ calls: 3, status: 'COMPLETED' });
});
