/**
 * close() gives the worker's queued, unstarted claims back before it resolves, also when a hung
 * handler used the whole shutdownTimeoutMs: once close() resolved, the queued receipts are due
 * again (PENDING, no lease, their attempt returned), checked at once, on the real PostgreSQL. The
 * release is its own statement with the statement deadline (statementTimeoutMs), so close() still
 * returns when the database does not answer it.
 */
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { latch, makeInbox, message, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const WORKER = { concurrency: 1, prefetch: 4, shutdownTimeoutMs: 100 } as const;

interface Row {
  id: string;
  status: string;
  attempts: number;
  lifetime_attempts: number;
  lease_expires_at: Date | null;
}

async function rows(ids: readonly string[]): Promise<Row[]> {
  return t.db.query<Row>(
    `SELECT id, status, attempts, lifetime_attempts, lease_expires_at
       FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[]) ORDER BY id`,
    [ids],
  );
}

/** Row locks on `ids` held by a connection of the test's own, so that the release waits for them. */
async function lockRows(ids: readonly string[]): Promise<{ release(): Promise<void> }> {
  const client = listened(new Client({ connectionString: t.url }));
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT id FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[]) FOR UPDATE', [ids]);
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

async function releaseWaiting(): Promise<boolean> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query ILIKE '%UPDATE ferry_inbox_receipts%' AND query ILIKE '%lifetime_attempts - 1%'`,
  );
  return (row?.n ?? 0) > 0;
}

describe('inbox close() with a hung handler and queued claims', () => {
  it('resolves only after the queued claims were given back: due again at once, without lease, attempt returned', async () => {
    const started = latch();
    let handlerSignal: AbortSignal | undefined;
    let hungId: string | undefined;
    const inbox = makeInbox(t.prisma, {
      worker: WORKER,
      handlers: {
        'close-hung': async (_payload, context) => {
          handlerSignal = context.signal;
          hungId = context.receiptId;
          started.open();
          await new Promise<void>(() => undefined);
        },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1)
      ids.push((await inbox.accept(message({ consumer: 'close-hung' }))).record.id);
    inbox.start();
    await started.promise;
    // One receipt runs (hung), the three others wait in the worker's queue, claimed.
    const claimed = await waitFor('every receipt claimed', async () => {
      const now = await rows(ids);
      return now.every((row) => row.status === 'PROCESSING') ? now : undefined;
    });
    expect(claimed).toHaveLength(4);
    // The release of the queued claims waits on these row locks until the test lets it go.
    const queuedIds = ids.filter((id) => id !== hungId);
    const lock = await lockRows(queuedIds);
    let closed = false;
    const closing = inbox.close().then(() => {
      closed = true;
    });
    try {
      await waitFor('close() to give up on the hung handler', async () => handlerSignal?.aborted === true);
      await waitFor('the release to wait on the row locks', releaseWaiting);
      expect(closed).toBe(false);
    } finally {
      await lock.release();
    }
    await closing;

    const after = await rows(ids);
    const released = after.filter((row) => row.id !== hungId);
    expect(released).toHaveLength(3);
    for (const row of released) {
      expect(row).toMatchObject({
        status: 'PENDING',
        attempts: 0,
        lifetime_attempts: 0,
        lease_expires_at: null,
      });
    }
  });
});
