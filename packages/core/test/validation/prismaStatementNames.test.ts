/**
 * ferryStatementNames: on a Prisma client built with it (PrismaPg's statementNameGenerator),
 * ferry's own parameterized statements run as named prepared statements, parsed once per
 * connection; the application's own queries stay unnamed.
 */
import { createRelay, emit, emitMany, ferryStatementNames, fromPrisma } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import type { PrismaClient } from '../../../../generated/prisma/client';
import { quietLogger } from '../inbox/helpers';

let t: TestDatabase;
/** One connection, so pg_prepared_statements (per session) shows what every statement left. */
let named: PrismaClient;
beforeAll(async () => {
  t = await createTestDatabase();
  named = t.newClient({ max: 1 }, { statementNameGenerator: ferryStatementNames });
});
afterAll(() => t.drop());

async function prepared(client: PrismaClient): Promise<string[]> {
  const rows = await client.$queryRawUnsafe<{ statement: string }[]>(
    'SELECT statement FROM pg_prepared_statements ORDER BY statement',
  );
  return rows.map((r) => r.statement);
}

async function drain(client: PrismaClient, count: number): Promise<number> {
  const db = fromPrisma(client);
  await emitMany(
    db,
    Array.from({ length: count }, (_, i) => ({ type: 'named', payload: { i }, orderingKey: `k${i % 3}` })),
  );
  const publisher = new InMemoryPublisher();
  const relay = createRelay({ db, publisher, logger: quietLogger, options: { batchSize: 10 } });
  for (let i = 0; i < 30 && publisher.delivered.length < count; i += 1) await relay.runOnce();
  await relay.close();
  return publisher.delivered.length;
}

describe('ferryStatementNames', () => {
  it("prepares ferry's claim, completion and emit on a Prisma client built with it", async () => {
    expect(await drain(named, 25)).toBe(25);
    const statements = await prepared(named);
    expect(statements.some((s) => s.includes('WITH RECURSIVE') && s.includes('outbox_events'))).toBe(true);
    expect(statements.some((s) => s.includes('INSERT INTO outbox_events'))).toBe(true);
    expect(statements.length).toBeGreaterThanOrEqual(3);
    // Each text once: later calls ran the prepared statement by its name.
    expect(new Set(statements).size).toBe(statements.length);
  });

  it("leaves the application's own queries unnamed", async () => {
    const text = 'SELECT $1::int + 41 AS n';
    expect(await named.$queryRawUnsafe(text, 1)).toEqual([{ n: 42 }]);
    await named.$transaction(async (tx) => expect(await tx.$queryRawUnsafe(text, 2)).toEqual([{ n: 43 }]));
    expect(await prepared(named)).not.toContain(text);
  });

  it('names only texts ferry sent with parameters', async () => {
    const claimLike = 'SELECT $1::int AS ferry_probe';
    expect(ferryStatementNames({ sql: claimLike, args: [1] })).toBe('');
    await fromPrisma(named).query(claimLike, [1]);
    expect(ferryStatementNames({ sql: claimLike, args: [1] })).toMatch(/^ferry_[0-9a-f]{24}$/);
    // Without arguments a text may hold several commands: never prepared.
    expect(ferryStatementNames({ sql: claimLike, args: [] })).toBe('');
  });

  it('prepares nothing on a client built without it', async () => {
    const plain = t.newClient({ max: 1 });
    expect(await drain(plain, 5)).toBe(5);
    expect(await prepared(plain)).toEqual([]);
  });
});

describe('a connection whose prepared statements meet a change', () => {
  // ferry's statements name their columns (no `*` over its tables), so a column a later migration
  // adds does not change a prepared statement's result ("cached plan must not change result type").
  it('runs on after a column is added to outbox_events (a migration during a rolling upgrade)', async () => {
    const client = t.newClient({ max: 1 }, { statementNameGenerator: ferryStatementNames });
    expect(await drain(client, 20)).toBe(20);
    await t.db.execute('ALTER TABLE outbox_events ADD COLUMN added_later text');
    try {
      expect(await drain(client, 20)).toBe(20);
    } finally {
      await t.db.execute('ALTER TABLE outbox_events DROP COLUMN added_later');
    }
  });

  it('recovers after DEALLOCATE ALL behind the driver: one statement fails, later ones run', async () => {
    const client = t.newClient({ max: 1 }, { statementNameGenerator: ferryStatementNames });
    expect(await drain(client, 5)).toBe(5);
    await client.$executeRawUnsafe('DEALLOCATE ALL');
    // The driver still takes ferry's statements for prepared on this connection: the first fails.
    await expect(emit(fromPrisma(client), { type: 'named', payload: {} })).rejects.toThrow(/does not exist/);
    // Every text has a new name now, prepared afresh.
    await emit(fromPrisma(client), { type: 'named', payload: {} });
    expect(await drain(client, 5)).toBe(6);
    expect((await prepared(client)).length).toBeGreaterThanOrEqual(3);
  });
});
