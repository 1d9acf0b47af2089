/**
 * An application that ends the pg Pool its running inbox worker uses (a shutdown in the wrong
 * order, or the pool ended by other code) leaves a worker that can never claim again: an ended
 * pool never opens a session. The worker stops polling on it, says so (its state, liveness), does
 * not report a FERRY_CLOSED claim error every poll interval for ever, and close() still works.
 */
import { createHealth, FerryError, pgTransactions, type InboxEvent } from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('stops polling an ended pool once, says so, and closes', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const events: InboxEvent[] = [];
  const handled: string[] = [];
  const inbox = makeInbox(pgTransactions(pool), {
    worker: { pollIntervalMs: 20 },
    handlers: { orders: async (payload) => void handled.push(String(payload.n)) },
    observer: (event) => void events.push(event),
  });
  inbox.start();
  const { record } = await inbox.accept(message());
  await waitUntil('the receipt handled', () => handled.length === 1);
  // The handler ran before its transaction committed: the completion is waited for.
  await waitUntil(
    'the receipt COMPLETED',
    async () =>
      (
        await t.db.query<{ status: string }>('SELECT status FROM ferry_inbox_receipts WHERE id = $1', [
          record.id,
        ])
      )[0]?.status === 'COMPLETED',
  );
  await pool.end();

  const claimErrors = () =>
    events.filter((event) => event.type === 'infrastructure-error' && event.operation === 'claim');
  await waitUntil('the worker stopped', () => inbox.state === 'stopped', 10_000);
  expect(inbox.stopReason).toMatch(/^its database client was ended \(FERRY_CLOSED\)/);
  expect(claimErrors()).toHaveLength(1);
  expect(claimErrors()[0]).toMatchObject({ error: expect.stringContaining('FERRY_CLOSED') });
  // Forty poll intervals later, still the one report.
  await new Promise((resolve) => setTimeout(resolve, 800));
  expect(claimErrors()).toHaveLength(1);

  const health = createHealth({ db: t.db, inbox });
  const live = await health.liveness();
  expect(live.status).toBe('down');
  expect(live.checks).toContainEqual(
    expect.objectContaining({
      name: 'inbox worker',
      status: 'down',
      detail: `state stopped: ${inbox.stopReason}`,
    }),
  );

  await inbox.close();
  expect(inbox.state).toBe('closed');
  await expect(inbox.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
}, 30_000);

it('claims on through a database that is unavailable: only an ended client stops the worker', async () => {
  let claims = 0;
  const inbox = makeInbox(
    t.prisma,
    { worker: { pollIntervalMs: 20 }, handlers: { orders: async () => undefined } },
    {
      ops: {
        claim: async () => {
          claims += 1;
          throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'Connection terminated unexpectedly');
        },
      },
    },
  );
  inbox.start();
  await waitUntil('three failed claims', () => claims >= 3);
  expect(inbox.state).toBe('running');
  expect(inbox.stopReason).toBeNull();
  await inbox.close();
});
