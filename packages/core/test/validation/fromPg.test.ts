/**
 * fromPg: ferry's parameterized statements run as named prepared statements on node-postgres;
 * statements without parameters (possibly several commands) still run as plain text.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createRelay, emitMany, fromPg } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { quietLogger } from '../inbox/helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

async function prepared(): Promise<string[]> {
  const rows = await fromPg(pool).query<{ statement: string }>(
    `SELECT statement FROM pg_prepared_statements ORDER BY statement`,
  );
  return rows.map((r) => r.statement);
}

describe('fromPg', () => {
  it('prepares parameterized statements once per connection and runs them again by name', async () => {
    const db = fromPg(pool);
    const text = 'SELECT $1::int + 1 AS n';
    expect(await db.query(text, [1])).toEqual([{ n: 2 }]);
    expect(await db.query(text, [41])).toEqual([{ n: 42 }]);
    await db.transaction(async (tx) => expect(await tx.query(text, [2])).toEqual([{ n: 3 }]));
    expect((await prepared()).filter((s) => s === text)).toHaveLength(1);
  });

  it('runs statements without parameters as plain text, several commands included', async () => {
    const db = fromPg(pool);
    await db.execute('CREATE TEMP TABLE probe (n int); INSERT INTO probe VALUES (1), (2)');
    expect(await db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe')).toEqual([{ n: 2 }]);
    expect(await prepared()).not.toContain('SELECT count(*)::int AS n FROM probe');
  });

  it('drives a relay: claim, publish and completion as prepared statements', async () => {
    const db = fromPg(pool);
    await emitMany(
      db,
      Array.from({ length: 25 }, (_, i) => ({ type: 'pg', payload: { i }, orderingKey: `k${i % 3}` })),
    );
    const publisher = new InMemoryPublisher();
    const relay = createRelay({ db, publisher, logger: quietLogger, options: { batchSize: 10 } });
    for (let i = 0; i < 30 && publisher.delivered.length < 25; i += 1) await relay.runOnce();
    await relay.close();
    expect(publisher.delivered).toHaveLength(25);
    expect((await prepared()).some((s) => s.includes('outbox_events'))).toBe(true);
  });
});
