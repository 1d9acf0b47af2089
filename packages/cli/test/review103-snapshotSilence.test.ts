/**
 * Review 103: `show` and `list --json` read a record and its stored payload text in one REPEATABLE
 * READ transaction (withJsonTexts, review 102). A server gone silent in the middle of it (the
 * network dropped the CLI's link; PostgreSQL never hears the CLI end it) must not leave that
 * transaction open on the server: its snapshot holds back vacuum and its locks hold every
 * ALTER TABLE of the table (and so everything queued behind that) for as long as the backend
 * lives. Core's admin transactions set `idle_in_transaction_session_timeout` to their deadline for
 * this; the snapshot read must end the same way, and still answer FERRY_TIMEOUT, exit 1.
 */
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { useCliDatabase } from './cliDatabase';
import { insertEvent, insertReceipt } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();

/** The CLI's statement reading the stored JSON texts (exactJson.ts): the silence begins at it. */
const TEXT_READ = 'WHERE id = ANY($1::uuid[])';
/** Far beyond the statement deadline (1 s): a transaction still open then is left for good. */
const ENDED_WITHIN_MS = 10_000;

/** Backends of the test database idle in a transaction (the test's own connections are not). */
async function idleInTransaction(): Promise<number> {
  const [row] = await ferry.test.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
  );
  return row?.n ?? 0;
}

async function ended(withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if ((await idleInTransaction()) === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Each command with a row of its own to read (the tests run in any order, alone too). */
const commands: Array<[string, () => Promise<string[]>]> = [
  ['outbox show', async () => ['outbox', 'show', await insertEvent(ferry.test.db, { tenant: 'r103' })]],
  [
    'outbox list --json',
    async () => {
      await insertEvent(ferry.test.db, { tenant: 'r103' });
      return ['outbox', 'list', '--tenant', 'r103', '--json'];
    },
  ],
  [
    'inbox show --json',
    async () => ['inbox', 'show', (await insertReceipt(ferry.test.db)).id, '--tenant', 'acme', '--json'],
  ],
  [
    'inbox list --json',
    async () => {
      await insertReceipt(ferry.test.db);
      return ['inbox', 'list', '--tenant', 'acme', '--json'];
    },
  ],
];

it.each(commands)(
  '%s: a server silent in the middle of the snapshot read leaves no transaction open on it',
  async (_name, argv) => {
    const args = await argv();
    const proxy = await halfOpenProxy(new URL(ferry.test.url));
    proxy.silenceOn(TEXT_READ);
    try {
      const url = proxy.url(ferry.test.url);
      const run = await ferry.bare(...args, '--statement-timeout', '1s', '--database-url', url);
      expect({
        code: run.code,
        timeout: [...run.lines, ...run.errors].join('\n').includes('FERRY_TIMEOUT'),
      }).toEqual({
        code: 1,
        timeout: true,
      });
      // The link stays half-open (the proxy never ends it): only PostgreSQL can end the transaction.
      expect(await ended(ENDED_WITHIN_MS)).toBe(true);
    } finally {
      proxy.close();
    }
  },
);
