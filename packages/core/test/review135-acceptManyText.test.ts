/**
 * Review 135, the inbox side of review135-emitManyText (one class: a batch call's items, each
 * within its limit, more text together than one statement can carry), failing on main:
 * acceptMany wrote all its receipts into one JSON parameter, `[${rows.join(',')}]`; past what a
 * JavaScript string can hold (about 2^29 characters) that threw `RangeError: Invalid string
 * length`, answered as FERRY_DATABASE_ERROR, retriable: a caller retrying it (as the code tells it
 * to) failed for ever (seen with 34 payloads of 16 MiB, the inbox's largest maxPayloadBytes, in
 * 4 s; the transports' batches are split by acceptIsolated's bisection). What should happen: every
 * input accepted, in as many statements as it takes, none carrying more than 64 Mi characters of
 * JSON (MAX_STATEMENT_TEXT_CHARS): what this test checks with 5 payloads of 16 MiB; the admission
 * limit is still decided once for the call (its first statement), as before.
 */
import { createInbox, prismaTransactions, type SqlExecutor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** What a statement may carry: 64 Mi characters of JSON, and its other text. */
const STATEMENT_BOUND = 64 * 1024 * 1024 + 100_000;

/** `db`, noting the characters of the string parameters of each statement it runs. */
function noting(db: SqlExecutor, texts: number[]): SqlExecutor {
  const note = (values: readonly unknown[] | undefined) =>
    texts.push((values ?? []).reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0));
  return {
    get inTransaction() {
      return db.inTransaction;
    },
    query: (text, values, options) => {
      note(values);
      return db.query(text, values, options);
    },
    execute: (text, values, options) => {
      note(values);
      return db.execute(text, values, options);
    },
    transaction: (work, options) => db.transaction((tx) => work(noting(tx, texts)), options),
  };
}

it('review135: acceptMany whose payloads are more text than one statement carries accepts them all, no statement over the bound', async () => {
  const texts: number[] = [];
  const maxPayloadBytes = 16 * 1024 * 1024;
  const inbox = createInbox(prismaTransactions(t.prisma, { db: noting(t.db, texts) }), {
    global: 'shared',
    maxPayloadBytes,
    handlers: { bulk: async () => undefined },
  });
  const text = 'x'.repeat(maxPayloadBytes - 16);
  const inputs = Array.from({ length: 5 }, (_, i) => ({
    consumer: 'bulk',
    messageId: `m-${i}`,
    tenantId: null,
    payload: { s: text },
  }));
  try {
    const results = await inbox.acceptMany(inputs);
    expect(results.map((r) => r.kind)).toEqual(inputs.map(() => 'accepted'));
    expect(Math.max(...texts)).toBeLessThanOrEqual(STATEMENT_BOUND);
    // Repeated identities across statements are answered `duplicate`: review138-statementRuns
    // (the bound lowered to a receipt per statement), without another 80 MiB sent here.
  } finally {
    await inbox.close();
  }
});
