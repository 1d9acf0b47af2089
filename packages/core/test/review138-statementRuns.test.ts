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
import { createInbox, InboxAdmissionRejectedError, prismaTransactions, type SqlExecutor } from '@ferry/core';
import { setStatementTextCharsForTests } from '@ferry/core/sql/statementRuns';
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

/** `db`, running `after` once its `nth` acceptance statement (an insert of receipts) answered. */
function afterInsert(db: SqlExecutor, nth: number, after: () => Promise<void>): SqlExecutor {
  let seen = 0;
  return {
    get inTransaction() {
      return db.inTransaction;
    },
    query: async (text, values, options) => {
      const rows = await db.query(text, values, options);
      if (text.includes('_to_recordset') && ++seen === nth) await after();
      return rows;
    },
    execute: (text, values, options) => db.execute(text, values, options),
    transaction: (work, options) => db.transaction(work, options),
  };
}

const input = (messageId: string) => ({ consumer: 'bulk', messageId, tenantId: 'acme', payload: { messageId } });

it('review138: an acceptMany refused by its first statement is refused whole, whatever the backlog does meanwhile', async () => {
  await t.db.execute('DELETE FROM ferry_inbox_receipts');
  const options = { global: 'shared', maxPendingMessages: 2, handlers: { bulk: async () => undefined } } as const;
  const filler = createInbox(prismaTransactions(t.prisma, { db: t.db }), options);
  await filler.acceptMany([input('backlog-1'), input('backlog-2')]);
  await filler.close();
  // The backlog drains after the call's first statement.
  const drain = () => t.db.execute(`UPDATE ferry_inbox_receipts SET status = 'COMPLETED', completed_at = now()`);
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
