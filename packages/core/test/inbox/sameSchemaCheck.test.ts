/**
 * One database, two schemas: ferry's own statements (`db`, a pool whose search_path names another
 * schema) and the handler transactions (the Prisma client, `public`) resolve ferry_inbox_receipts
 * to two different tables. The same-database check compared only the database and the server, so
 * initialize() let it start; acceptance and claims then ran on one table and every handler
 * transaction's claim check looked in the other, and every message went DEAD as a lost lease
 * (the cause never named), as with two databases (review 40).
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { FerryConfigError, fromPg, prismaTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox } from './helpers';

let t: TestDatabase;
const pools: Pool[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('CREATE SCHEMA other');
  await t.db.execute(
    'CREATE TABLE other.ferry_inbox_receipts (LIKE public.ferry_inbox_receipts INCLUDING ALL)',
  );
  await t.db.execute('CREATE SCHEMA empty');
});
afterAll(async () => {
  for (const pool of pools) await pool.end();
  await t.drop();
});

function poolOn(searchPath: string): Pool {
  const pool = listened(
    new Pool({ connectionString: t.url, max: 3, options: `-c search_path=${searchPath}` }),
  );
  pools.push(pool);
  return pool;
}

async function initialized(pool: Pool): Promise<unknown> {
  const inbox = makeInbox(prismaTransactions(t.prisma, { db: fromPg(pool) }), {
    handlers: { orders: async () => undefined },
  });
  return inbox.initialize().then(
    () => 'started',
    (error: unknown) => error,
  );
}

describe('Inbox.initialize(): ferry’s statements and the handler transactions reach one table', () => {
  it('refuses a db whose search_path resolves ferry_inbox_receipts to another schema, naming both', async () => {
    const outcome = await initialized(poolOn('other'));
    expect(outcome).toBeInstanceOf(FerryConfigError);
    expect(String((outcome as Error).message)).toMatch(
      /reach other\.ferry_inbox_receipts[\s\S]*reach public\.ferry_inbox_receipts/,
    );
  });

  it('starts when both resolve it to the same schema, however the search_path is written', async () => {
    expect(await initialized(poolOn('public,empty'))).toBe('started');
    expect(await initialized(poolOn('"$user",public'))).toBe('started');
  });
});
