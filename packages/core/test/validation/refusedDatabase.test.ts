/**
 * Review finding (failed first): a database that refuses ferry as a whole (a role that does not
 * exist, 28000; a database that does not exist, 3D000; a read-only server such as a standby a
 * failover left the endpoint on, 25006; a missing GRANT, 42501) was the retriable "unknown cause"
 * FERRY_DATABASE_ERROR. Transports treat only FERRY_DATABASE_UNAVAILABLE / FERRY_TIMEOUT as an
 * outage (isBatchWideFailure): for anything else they spend transport retries per delivery and
 * then dead-letter, so a credential rotation gone wrong dead-lettered every delivery of the window.
 * These refusals are not any message's fault: each is an outage, held until an operator fixes it.
 */
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg, fromPrisma, Inbox, pgTransactions, type SqlExecutor } from '@ferry/core';
import { isBatchWideFailure } from '@ferry/core/transport';
import { translateDbError } from '../../src/sql/dbErrors';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';
import { quietLogger } from '../inbox/helpers';

let t: TestDatabase;
const suffix = randomBytes(4).toString('hex');
const NO_GRANTS = `ferry_nogrants_${suffix}`;

function withUser(url: string, user: string, database?: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  if (database !== undefined) parsed.pathname = `/${database}`;
  return parsed.toString();
}

const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  t = await createTestDatabase();
  // A role that may log in (trust) and has no privilege on ferry's tables.
  await t.db.execute(`CREATE ROLE ${NO_GRANTS} LOGIN`);
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  await t.drop();
  await t.db.execute(`DROP ROLE IF EXISTS ${NO_GRANTS}`).catch(() => undefined);
});

/** One pg pool and one Prisma client on `url`, closed after the file. */
function executorsOn(url: string, options: { readOnly?: boolean } = {}): SqlExecutor[] {
  const pgOptions = options.readOnly ? { options: '-c default_transaction_read_only=on' } : {};
  const pool = listened(new Pool({ connectionString: url, max: 2, ...pgOptions }));
  const prisma = prismaFor(url, { max: 2, ...pgOptions });
  cleanup.push(
    () => pool.end(),
    () => prisma.$disconnect(),
  );
  return [fromPg(pool), fromPrisma(prisma)];
}

let built: Array<[string, string, SqlExecutor[]]> | undefined;
const refusals = (): Array<[string, string, SqlExecutor[]]> =>
  (built ??= [
    ['a role that does not exist', '28000', executorsOn(withUser(t.url, `ferry_nosuchrole_${suffix}`))],
    [
      'a database that does not exist',
      '3D000',
      executorsOn(withUser(t.url, new URL(t.url).username || 'postgres', `ferry_nosuchdb_${suffix}`)),
    ],
    ['a read-only server', '25006', executorsOn(t.url, { readOnly: true })],
    ['a role without the GRANTs ferry needs', '42501', executorsOn(withUser(t.url, NO_GRANTS))],
  ]);

const INSERT = `INSERT INTO outbox_events (id, event_type, payload, max_retries)
  VALUES (gen_random_uuid(), 'probe', '{}', 1)`;

describe('a database that refuses ferry as a whole is an outage', () => {
  it.each([0, 1, 2, 3])(
    'refusal %#: FERRY_DATABASE_UNAVAILABLE, retriable, batch-wide, on pg and Prisma',
    async (index) => {
      const [what, sqlState, executors] = refusals()[index]!;
      for (const db of executors) {
        const raw = await db.execute(INSERT).then(
          () => new Error(`${what}: the statement did not fail`),
          (e: unknown) => e,
        );
        const translated = translateDbError(raw, 'probe');
        expect({
          what,
          code: translated.code,
          retriable: translated.retriable,
          sqlState: translated.details.sqlState,
        }).toEqual({
          what,
          code: 'FERRY_DATABASE_UNAVAILABLE',
          retriable: true,
          sqlState,
        });
        expect(isBatchWideFailure(translated)).toBe(true);
      }
    },
  );

  it('acceptMany on such a database throws the batch-wide outage (no input is answered invalid)', async () => {
    // The read-only server and the role without GRANTs reach the insert itself.
    const readOnly = listened(
      new Pool({
        connectionString: t.url,
        max: 2,
        options: '-c default_transaction_read_only=on',
      }),
    );
    const noGrants = listened(new Pool({ connectionString: withUser(t.url, NO_GRANTS), max: 2 }));
    cleanup.push(
      () => readOnly.end(),
      () => noGrants.end(),
    );
    for (const pool of [readOnly, noGrants]) {
      const inbox = new Inbox(pgTransactions(pool), { logger: quietLogger, worker: { enabled: false } });
      const outcome = await inbox
        .acceptMany([{ consumer: 'c', messageId: `m-${suffix}`, tenantId: 't', payload: { n: 1 } }])
        .then(
          (results) => ({ results }),
          (error: unknown) => ({ error }),
        );
      expect('error' in outcome && isBatchWideFailure(outcome.error)).toBe(true);
      await inbox.close();
    }
  });
});
