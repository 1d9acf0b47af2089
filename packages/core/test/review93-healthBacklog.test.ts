/**
 * Review 93 (failed first): details() when the backlog read fails with something that is not a
 * FerryError.
 *
 * What I did: details() over a real database through an executor of my own (an application's
 * adapter, as `db` may be) that answers readiness' `SELECT 1` and then, for the backlog reads,
 * the outbox's backlog read, and answers the inbox's with what no driver returns (no rows array: a
 * bug in the adapter), or throws a plain TypeError.
 * What happened: details() rejected with the TypeError: every other failure (a transport, the
 * database, the schema, a FerryError of the backlog) is a down check, but this one made the
 * health endpoint answer an error instead of a report.
 * What should happen: a down `backlog` check naming the failure; details() resolves.
 */
import { createHealth, type SqlExecutor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** `t.db` but for the inbox's backlog read, answered by `backlog`. */
function adapter(backlog: () => Promise<unknown>): SqlExecutor {
  return {
    get inTransaction() {
      return t.db.inTransaction;
    },
    query: <T>(text: string, values?: readonly unknown[]) =>
      text.includes('inbox') ? (backlog() as Promise<T[]>) : t.db.query<T>(text, values),
    execute: (text, values) => t.db.execute(text, values),
    transaction: (work) => t.db.transaction(work),
  };
}

describe('details() whose backlog read fails with no FerryError', () => {
  it.each([
    ['no rows array', () => Promise.resolve(undefined)],
    [
      'a TypeError',
      () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'rows')")),
    ],
  ])('%s: a down backlog check, details() resolving', async (_name, backlog) => {
    const details = await createHealth({ db: adapter(backlog), checkSchema: false }).details();
    expect(details.status).toBe('down');
    expect(details.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
      'database:up',
      'outbox backlog:up',
      'backlog:down',
    ]);
    expect({ outbox: details.outbox, inbox: details.inbox }).toEqual({ outbox: null, inbox: null });
  });
});
