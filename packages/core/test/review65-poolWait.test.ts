/**
 * Review 65: a statement deadline that passes while the executor still waits for a pooled
 * connection. The admins' docs (docs/outbox.md, Admin; docs/inbox.md) promise a retriable
 * FERRY_TIMEOUT, "FERRY_DATABASE_UNAVAILABLE when no connection came within it", for every client
 * the admins take (Prisma, a pg pool or client, Kysely), not only fromPg.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createOutboxAdmin, fromPg, InboxAdmin } from '@ferry/core';
import { fromKysely } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

jest.setTimeout(30_000);

let t: TestDatabase;
const ends: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end().catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

/** A pool of one connection, held by the application's own long transaction. */
async function exhausted(): Promise<{ pool: Pool; held: PoolClient }> {
  const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  const held = await pool.connect();
  await held.query('BEGIN');
  ends.push(async () => {
    await held.query('ROLLBACK').catch(() => undefined);
    held.release();
    await pool.end();
  });
  return { pool, held };
}

describe('review65: no connection within the deadline is FERRY_DATABASE_UNAVAILABLE on every executor the admins take', () => {
  it('a Kysely instance on a pool the application exhausted: outbox admin list answers FERRY_DATABASE_UNAVAILABLE (fromPg does), not FERRY_TIMEOUT', async () => {
    const { pool } = await exhausted();
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    // Same pool through fromPg: the documented answer.
    const viaPg = await createOutboxAdmin(fromPg(pool), { statementTimeoutMs: 300 })
      .list({ limit: 1 })
      .catch((error: unknown) => error);
    const viaKysely = await createOutboxAdmin(fromKysely(kysely), { statementTimeoutMs: 300 })
      .list({ limit: 1 })
      .catch((error: unknown) => error);
    const code = (error: unknown): unknown => (error as { code?: unknown }).code;
    expect({ fromPg: code(viaPg), kysely: code(viaKysely) }).toEqual({
      fromPg: 'FERRY_DATABASE_UNAVAILABLE',
      kysely: 'FERRY_DATABASE_UNAVAILABLE',
    });
  });

  it('a Prisma client whose pool the application exhausted: inbox admin stats answers a FERRY_TIMEOUT that claims neither a connection wait nor an unanswered statement', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const held = await pool.connect();
    await held.query('BEGIN');
    const { prismaOnPool } = await import('../../../test-support/database');
    const prisma = prismaOnPool(pool);
    ends.push(async () => {
      await held.query('ROLLBACK').catch(() => undefined);
      held.release();
      await prisma.$disconnect();
      await pool.end();
    });
    const error = await new InboxAdmin(prisma, { statementTimeoutMs: 300 })
      .forGlobal()
      .stats()
      .catch((e: unknown) => e);
    // fix65: Prisma's driver adapter takes the pooled connection where ferry cannot see it, so ferry claims neither cause.
    expect(error).toMatchObject({
      code: 'FERRY_TIMEOUT',
      retriable: true,
      details: { connection: 'unknown' },
    });
    expect((error as Error).message).not.toContain('did not answer a statement');
  });
});
