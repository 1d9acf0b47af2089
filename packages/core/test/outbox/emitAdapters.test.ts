/**
 * emit / emitMany in an application's node-postgres or Kysely transaction: the rows commit with
 * it and vanish with its rollback; given a root client, emit commits a transaction of its own.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createEmitter,
  emit,
  emitMany,
  FerryValidationError,
  type ApplicationTransaction,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
let pool: Pool;
let kysely: Kysely<Record<string, never>>;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 4 }));
  kysely = new Kysely({
    dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 2 })) }),
  });
});
afterAll(async () => {
  await pool.end();
  await kysely.destroy();
  await t.drop();
});

let sequence = 0;
/** Events of this test only: their payload carries a run id. */
function events(n: number): { run: string; input: { type: string; payload: { run: string; i: number } }[] } {
  sequence += 1;
  const run = `run-${sequence}`;
  return { run, input: Array.from({ length: n }, (_, i) => ({ type: 'adapter.emit', payload: { run, i } })) };
}

/** Committed rows of `run`, seen from another connection. */
async function committed(run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`,
    [run],
  );
  return row?.n ?? -1;
}

async function withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await work(client);
  } finally {
    client.release();
  }
}

describe('emit on a node-postgres client', () => {
  it('costs one statement per call in the application’s transaction (two with ordering keys: the key locks)', async () => {
    await withClient(async (client) => {
      const sent: string[] = [];
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        sent.push(String(text));
        return query(...args);
      };
      try {
        await query('BEGIN');
        const { run, input } = events(3);
        await emitMany(client, input);
        expect(sent).toHaveLength(1);
        sent.length = 0;
        await emitMany(
          client,
          input.map((event, i) => ({ ...event, orderingKey: `key-${i}` })),
        );
        expect(sent).toHaveLength(2);
        await query('COMMIT');
        expect(await committed(run)).toBe(6);
      } finally {
        (client as unknown as { query: unknown }).query = query;
      }
    });
  });

  it('joins the application’s transaction (after its BEGIN): invisible until COMMIT, then committed', async () => {
    const { run, input } = events(3);
    await withClient(async (client) => {
      await client.query('BEGIN');
      const { ids } = await emitMany(client, input);
      expect(ids).toHaveLength(3);
      expect(await committed(run)).toBe(0);
      await client.query('COMMIT');
    });
    expect(await committed(run)).toBe(3);
  });

  it('leaves nothing behind when the application rolls its transaction back', async () => {
    const { run, input } = events(2);
    await withClient(async (client) => {
      await client.query('BEGIN');
      await emit(client, input[0]!);
      await emitMany(client, input.slice(1));
      await client.query('ROLLBACK');
    });
    expect(await committed(run)).toBe(0);
  });

  it('commits a transaction of its own on an idle client, and leaves the client idle', async () => {
    const { run, input } = events(2);
    const inserted: boolean[] = [];
    const emitter = createEmitter({
      observer: (event) => void (event.type === 'inserted' && inserted.push(event.committed)),
    });
    await withClient(async (client) => {
      await emitter.emitMany(client, input);
      expect(client.getTransactionStatus()).toBe('I');
    });
    expect(await committed(run)).toBe(2);
    expect(inserted).toEqual([true]);
  });

  it('commits a transaction of its own on a pool', async () => {
    const { run, input } = events(1);
    await emit(pool, input[0]!);
    expect(await committed(run)).toBe(1);
  });
});

describe('emit on Kysely', () => {
  it('commits with the application’s Kysely transaction', async () => {
    const { run, input } = events(2);
    await kysely.transaction().execute(async (trx) => {
      await emitMany(trx, input);
      expect(await committed(run)).toBe(0);
    });
    expect(await committed(run)).toBe(2);
  });

  it('vanishes with the rollback of the application’s Kysely transaction', async () => {
    const { run, input } = events(1);
    await expect(
      kysely.transaction().execute(async (trx) => {
        await emit(trx, input[0]!);
        throw new Error('business failure');
      }),
    ).rejects.toThrow('business failure');
    expect(await committed(run)).toBe(0);
  });

  it('commits a transaction of its own on a Kysely instance', async () => {
    const { run, input } = events(1);
    await emit(kysely, input[0]!);
    expect(await committed(run)).toBe(1);
  });
});

describe('emit on something that is not a client', () => {
  it.each([
    ['an empty object', {}],
    ['null', null],
    ['a string', 'postgres://'],
  ])('rejects %s with FerryValidationError naming tx, and writes nothing', async (_name, tx) => {
    const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    const error = await emit(tx as unknown as ApplicationTransaction, { type: 'x', payload: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryValidationError);
    expect(error).toMatchObject({ field: 'tx' });
    expect(await t.db.query('SELECT count(*)::int AS n FROM outbox_events')).toEqual(before);
  });
});
