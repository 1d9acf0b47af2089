/**
 * The relay's claim commits without waiting for its WAL to be flushed (synchronous_commit off, for
 * the claim statement's own transaction only; leaseCommit.ts says why); inside a transaction of the
 * caller's it leaves the setting alone: it would make the caller's writes non-durable too. The inbox
 * worker's claim commits durably: its handler runs under it (review69-claim-crash.test.ts).
 *
 * A claim statement outside a transaction is its own transaction, which ends with it, so the
 * setting it leaves cannot be read afterwards. The executor below runs each statement on a
 * client the test holds in a transaction of its own (BEGIN ... ROLLBACK) while telling ferry it
 * is a root executor, as a pool is, so the setting the claim made can be read before the end.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { emit, type SqlExecutor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { claimReceipts } from '../src/inbox/sql/claim';
import { claimBatch } from '../src/outbox/sql/claimBatch';
import { makeInbox, message } from './inbox/helpers';

let t: TestDatabase;
let client: Client;
beforeAll(async () => {
  t = await createTestDatabase();
  client = listened(new Client({ connectionString: t.url }));
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await t.drop();
});

/** A root executor (not in a transaction) whose statements the test keeps in one open transaction. */
function heldRoot(): SqlExecutor {
  const executor: SqlExecutor = {
    inTransaction: false,
    query: async <T>(text: string, values?: readonly unknown[]) =>
      (await client.query(text, values as unknown[])).rows as T[],
    execute: async (text, values) => (await client.query(text, values as unknown[])).rowCount ?? 0,
    transaction: (work) => work(executor),
  };
  return executor;
}

async function synchronousCommit(): Promise<string> {
  const { rows } = await client.query<{ value: string }>(
    "SELECT current_setting('synchronous_commit') AS value",
  );
  return rows[0]!.value;
}

/** Runs `claim` on a held root executor; the transaction's synchronous_commit after it. */
async function settingAfter(claim: (db: SqlExecutor) => Promise<number>): Promise<string> {
  await client.query('BEGIN');
  try {
    expect(await claim(heldRoot())).toBe(1);
    return await synchronousCommit();
  } finally {
    await client.query('ROLLBACK');
  }
}

describe('which claims commit without waiting for their WAL flush', () => {
  beforeEach(async () => {
    await t.db.execute('TRUNCATE ferry_inbox_receipts, outbox_events');
  });

  it('the inbox claim leaves synchronous_commit on: its handler runs under it', async () => {
    const inbox = makeInbox(t.prisma, { worker: { enabled: false } });
    await inbox.initialize();
    await inbox.accept(message({ consumer: 'c' }));
    expect(await synchronousCommit()).toBe('on');
    const claimed = (db: SqlExecutor) => claimReceipts(db, ['c'], 10, 30_000, 8).then((rows) => rows.length);
    expect(await settingAfter(claimed)).toBe('on');
    // Inside a transaction ferry joins too.
    const inside = await t.db.transaction(async (tx) => {
      await claimReceipts(tx, ['c'], 10, 30_000, 8);
      const [row] = await tx.query<{ value: string }>(
        "SELECT current_setting('synchronous_commit') AS value",
      );
      return row!.value;
    });
    expect(inside).toBe('on');
  });

  it.each([
    ['block', false],
    ['block', true],
    ['skip', false],
    ['skip', true],
  ] as const)(
    'the relay claim (failedHead %s, key scan first %s) does the same',
    async (failedHead, keyScanFirst) => {
      await emit(t.db, { type: 'claim.commit', payload: { n: 1 }, orderingKey: 'k' });
      const claimed = (db: SqlExecutor) =>
        claimBatch(db, { token: randomUUID(), limit: 10, leaseMs: 30_000, failedHead, keyScanFirst }).then(
          (result) => result.rows.length,
        );
      expect(await settingAfter(claimed)).toBe('off');
      // Back to the session's value once that transaction ended.
      expect(await synchronousCommit()).toBe('on');
      const inside = await t.db.transaction(async (tx) => {
        await claimBatch(tx, { token: randomUUID(), limit: 10, leaseMs: 30_000, failedHead, keyScanFirst });
        const [row] = await tx.query<{ value: string }>(
          "SELECT current_setting('synchronous_commit') AS value",
        );
        return row!.value;
      });
      expect(inside).toBe('on');
    },
  );
});
