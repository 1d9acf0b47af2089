/**
 * Review 138 (hostile review of review 135's size-bounded statements), with the bound lowered
 * (setStatementTextCharsForTests) so a call in several statements takes kilobytes, not 64 Mi
 * characters of JSON. Failing on main: an acceptMany whose first statement the admission gate
 * refused counted the backlog again for each later statement, so when the backlog had shrunk
 * meanwhile (a worker completing receipts) the later runs were inserted: the call was admitted in
 * part, its first messages refused and its later ones accepted, where the inbox documents the
 * admission as decided once for the call, by its first statement. What should happen: every new
 * identity of a refused call refused, duplicates still answered.
 */
import {
  createInbox,
  emitMany,
  InboxAdmissionRejectedError,
  prismaTransactions,
  type SqlExecutor,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { drainAll, relay } from './outbox/helpers';
import type { StatementOptions } from '../src/sql/executor';
import { setStatementTextCharsForTests } from '../src/sql/statementRuns';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  // A receipt's row is about 250 characters: one statement per receipt.
  setStatementTextCharsForTests(100);
});
afterAll(async () => {
  setStatementTextCharsForTests(undefined);
  await t.drop();
});

/**
 * `db` (and its transactions), running `after` once its `nth` statement holding `marker` (an
 * insert of receipts by default) answered.
 */
function afterInsert(
  db: SqlExecutor,
  nth: number,
  after: () => Promise<void>,
  marker = '_to_recordset',
  seen = { n: 0 },
): SqlExecutor {
  return {
    get inTransaction() {
      return db.inTransaction;
    },
    query: async <T>(text: string, values?: readonly unknown[], options?: StatementOptions) => {
      const rows = await db.query<T>(text, values, options);
      if (text.includes(marker) && ++seen.n === nth) await after();
      return rows;
    },
    execute: (text, values, options) => db.execute(text, values, options),
    transaction: (work, options) =>
      db.transaction((tx) => work(afterInsert(tx, nth, after, marker, seen)), options),
  };
}

const input = (messageId: string) => ({
  consumer: 'bulk',
  messageId,
  tenantId: 'acme',
  payload: { messageId },
});

it('review138: an acceptMany refused by its first statement is refused whole, whatever the backlog does meanwhile', async () => {
  await t.db.execute('DELETE FROM ferry_inbox_receipts');
  const options = {
    global: 'shared',
    maxPendingMessages: 2,
    handlers: { bulk: async () => undefined },
  } as const;
  const filler = createInbox(prismaTransactions(t.prisma, { db: t.db }), options);
  await filler.acceptMany([input('backlog-1'), input('backlog-2')]);
  await filler.close();
  // The backlog drains after the call's first statement.
  const drain = async () => {
    await t.db.execute(`UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = now()`);
  };
  const inbox = createInbox(prismaTransactions(t.prisma, { db: afterInsert(t.db, 1, drain) }), options);
  try {
    const error = await inbox
      .acceptMany([input('new-1'), input('backlog-1'), input('new-2'), input('new-3')])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InboxAdmissionRejectedError);
    expect((error as InboxAdmissionRejectedError).results.map((r) => r.kind)).toEqual([
      'refused',
      'duplicate',
      'refused',
      'refused',
    ]);
    const stored = await t.db.query<{ message_id: string }>(
      'SELECT message_id FROM ferry_inbox_receipts ORDER BY message_id',
    );
    expect(stored.map((r) => r.message_id)).toEqual(['backlog-1', 'backlog-2']);
  } finally {
    await inbox.close();
  }
});

describe('review138 probes: a call in several statements', () => {
  const options = { global: 'shared', handlers: { bulk: async () => undefined } } as const;

  it('acceptMany answers repeated identities in order across statements, and a call failing part way is answered as before when retried', async () => {
    await t.db.execute('DELETE FROM ferry_inbox_receipts');
    const failing = createInbox(
      prismaTransactions(t.prisma, {
        db: afterInsert(t.db, 2, () =>
          Promise.reject(new Error('connection lost after the second statement')),
        ),
      }),
      options,
    );
    const inputs = [
      input('a'),
      input('b'),
      { ...input('a'), payload: { other: true } },
      input('c'),
      input('b'),
      input('d'),
    ];
    try {
      await expect(failing.acceptMany(inputs)).rejects.toThrow();
    } finally {
      await failing.close();
    }
    const inbox = createInbox(prismaTransactions(t.prisma, { db: t.db }), options);
    try {
      const results = await inbox.acceptMany(inputs);
      // The statements before the failure committed (each commits on its own): answered as duplicates.
      expect(results.map((r) => r.kind)).toEqual([
        'duplicate',
        'duplicate',
        'conflict',
        'accepted',
        'duplicate',
        'accepted',
      ]);
      expect(results[4]).toMatchObject({ id: (results[1] as { id: string }).id });
      const [n] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_inbox_receipts');
      expect(n?.n).toBe(4);
    } finally {
      await inbox.close();
    }
  });

  it('concurrent acceptMany calls sharing identities in other orders, split differently, neither fail nor store twice', async () => {
    await t.db.execute('DELETE FROM ferry_inbox_receipts');
    const inboxes = [t.db, t.db, t.db].map((db) =>
      createInbox(prismaTransactions(t.prisma, { db }), options),
    );
    // Two receipts a statement at most, fewer the larger a call's receipts.
    setStatementTextCharsForTests(600);
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `shared-${i}`);
      const orders = [
        ids,
        [...ids].reverse(),
        ids.filter((_, i) => i % 2).concat(ids.filter((_, i) => !(i % 2))),
      ];
      // Payloads of different sizes in each call: its statements hold different identities.
      const settled = await Promise.all(
        orders.map((order, k) =>
          inboxes[k]!.acceptMany(
            order.map((id) => ({ ...input(id), headers: { pad: 'p'.repeat(k * 150) } })),
          ),
        ),
      );
      const kinds = settled.flat().map((r) => r.kind);
      expect(kinds.filter((kind) => kind === 'accepted')).toHaveLength(ids.length);
      expect(kinds.filter((kind) => kind === 'duplicate' || kind === 'accepted')).toHaveLength(
        3 * ids.length,
      );
    } finally {
      setStatementTextCharsForTests(100);
      await Promise.all(inboxes.map((inbox) => inbox.close()));
    }
  });

  it("emitMany in several statements keeps a key's events in emit order, and a failing statement stores none of them", async () => {
    await t.db.execute('DELETE FROM outbox_events');
    const events = Array.from({ length: 12 }, (_, i) => ({
      type: 'step',
      payload: { i, pad: 'p'.repeat((i % 3) * 30) },
      orderingKey: `k${i % 2}`,
    }));
    const failing = afterInsert(
      t.db,
      2,
      () => Promise.reject(new Error('lost')),
      'INSERT INTO outbox_events',
    );
    await expect(emitMany(failing, events)).rejects.toThrow();
    const [none] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    expect(none?.n).toBe(0);
    const { ids } = await emitMany(t.db, events);
    const rows = await t.db.query<{ id: string }>('SELECT id::text FROM outbox_events ORDER BY seq');
    expect(rows.map((r) => r.id)).toEqual(ids);
    const publisher = new InMemoryPublisher();
    const r = relay(t.db, publisher, { batchSize: 5 });
    await drainAll(r, t.db);
    await r.close();
    for (const key of ['k0', 'k1']) {
      const sent = publisher.delivered.filter((m) => m.orderingKey === key).map((m) => m.id);
      expect(sent).toEqual(ids.filter((_, i) => `k${i % 2}` === key));
    }
  });
});
