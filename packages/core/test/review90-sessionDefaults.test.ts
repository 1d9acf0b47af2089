/**
 * Review 90 (failed first): session defaults a handler leaves on a pooled connection reach ferry's
 * own statements, and the application's, on the same pool.
 *
 * User: one pool for the handlers and for ferry's own statements, as the README shows
 * (`pgTransactions(pool)`, `kyselyTransactions(db)`, Prisma on the pool through its adapter). A
 * handler writes `SET` where it meant `SET LOCAL` (or `SET SESSION CHARACTERISTICS` where it meant
 * `SET TRANSACTION`); its transaction commits and the connection goes back to the pool with the
 * handler's session default. Contract: a handler cannot harm its neighbours.
 *
 * What happened: `default_transaction_read_only` left on made ferry's own statements on that
 * connection fail with 25006 (acceptance retried for ever, claims refused) for as long as the
 * connection lived; `synchronous_commit = off` made later commits on it (acceptance, after which
 * the broker's delivery is acknowledged) return before their WAL was flushed; a changed
 * `search_path` or default isolation stayed for the next user of the connection.
 * Now: the completion, the last statement of the handler transaction, puts back every such
 * session default the handler changed (as the first statement read it), so the commit leaves the
 * connection as the transaction found it.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { ADAPTER_SUBJECTS, type AdapterSubject } from './inbox/adapterSubjects';
import { makeInbox, message, receiptRow } from './inbox/helpers';

const LEAVE = [
  'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY',
  'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE',
  'SET synchronous_commit = off',
  'SET search_path = pg_catalog, public',
  'SET ROLE postgres',
  // How the server writes values ferry and the application read back: extra_float_digits -3
  // rounds the float8 milliseconds ferry reads times as (1764977000123 -> 1.76497700012e+12).
  'SET extra_float_digits = -3',
  "SET TimeZone = 'Pacific/Chatham'",
  "SET DateStyle = 'SQL, DMY'",
  "SET IntervalStyle = 'sql_standard'",
  "SET bytea_output = 'escape'",
];
const SHOW = `SELECT current_setting('default_transaction_read_only') AS read_only,
  current_setting('default_transaction_isolation') AS isolation,
  current_setting('synchronous_commit') AS sync,
  current_setting('search_path') AS search_path,
  current_setting('role') AS role,
  current_setting('extra_float_digits') AS float_digits,
  current_setting('TimeZone') AS time_zone,
  current_setting('DateStyle') AS date_style,
  current_setting('IntervalStyle') AS interval_style,
  current_setting('bytea_output') AS bytea_output`;

describe('review90: session defaults a handler leaves on its pooled connection', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  describe.each(ADAPTER_SUBJECTS)('on %s', (name, factory) => {
    const tag = name.replace(/\W/g, '').slice(0, 20);
    // One connection: whatever ferry or the application runs next gets the one the handler left.
    let subject: AdapterSubject<unknown>;
    const pool = () => subject.pool;
    beforeAll(() => {
      subject = factory(t, 1);
    });
    afterAll(async () => {
      await subject.end();
    });

    it("are put back at the completion: ferry's next acceptance, claim and completion work, the connection is as before", async () => {
      const before = (await pool().query(SHOW)).rows[0];
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [`leave-${tag}`]: async (_payload, { tx }) => {
            for (const text of LEAVE) await subject.run(tx, text);
          },
          [`next-${tag}`]: async () => undefined,
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 3 },
      });
      const left = await inbox.accept(message({ consumer: `leave-${tag}` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      expect(await receiptRow(t, left.record.id)).toMatchObject({ status: 'COMPLETED' });
      expect((await pool().query(SHOW)).rows[0]).toEqual(before);

      const next = await inbox.accept(message({ consumer: `next-${tag}` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      expect(await receiptRow(t, next.record.id)).toMatchObject({ status: 'COMPLETED' });
    });

    it('a handler that fails leaves nothing either (its transaction rolled back)', async () => {
      const before = (await pool().query(SHOW)).rows[0];
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [`fail-${tag}`]: async (_payload, { tx }) => {
            for (const text of LEAVE) await subject.run(tx, text);
            throw new Error('handler failed after its SETs');
          },
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 3 },
      });
      await inbox.accept(message({ consumer: `fail-${tag}` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0 });
      expect((await pool().query(SHOW)).rows[0]).toEqual(before);
    });
  });
});
