/**
 * ferry's statements on a Kysely instance or Transaction run without the instance's plugins
 * (review 68): no plugin's transformResult sees ferry's rows, on every path a statement takes (an
 * instance, an instance under a statement deadline, a Transaction, a ControlledTransaction), and
 * no plugin's transformQuery redirects ferry's raw text (WithSchemaPlugin). An emit on the
 * application's Transaction stays inside it.
 */
import {
  CamelCasePlugin,
  Kysely,
  PostgresDialect,
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { emit } from '@ferry/core';
import { fromKysely } from '@ferry/core/kysely';
import { withStatementDeadline } from '../../src/sql/statementDeadline';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

jest.setTimeout(30_000);

/** A plugin that replaces every row it sees, and fails any query it is asked to transform. */
class HijackingPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    throw new Error(`HijackingPlugin was asked to transform a ${args.node.kind}`);
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return { ...args.result, rows: args.result.rows.map(() => ({ hijacked: true })) };
  }
}

let t: TestDatabase;
let kysely: Kysely<Record<string, never>>;
beforeAll(async () => {
  t = await createTestDatabase();
  kysely = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 2 })) }),
    plugins: [new CamelCasePlugin(), new HijackingPlugin()],
  });
});
afterAll(async () => {
  await kysely.destroy();
  await t.drop();
});

const TEXT = 'SELECT 3::int AS retry_count, $1::text AS event_type';
const ROWS = [{ retry_count: 3, event_type: 'x' }];

describe('fromKysely: the instance plugins do not apply to ferry', () => {
  it('on the instance, with and without a statement deadline, ferry reads the rows PostgreSQL returned', async () => {
    expect({
      plain: await fromKysely(kysely).query(TEXT, ['x']),
      deadline: await withStatementDeadline(fromKysely(kysely), 5_000).query(TEXT, ['x']),
      affected: await fromKysely(kysely).execute(TEXT, ['x']),
    }).toEqual({ plain: ROWS, deadline: ROWS, affected: 1 });
  });

  it('on a Transaction and a ControlledTransaction: the same rows, on the transaction itself', async () => {
    const txid = 'SELECT txid_current()::text AS txid';
    const inTransaction = await kysely.transaction().execute(async (trx) => ({
      rows: await fromKysely(trx).query(TEXT, ['x']),
      joined:
        (await fromKysely(trx).query<{ txid: string }>(txid))[0]?.txid ===
        (await fromKysely(trx.withoutPlugins()).query<{ txid: string }>(txid))[0]?.txid,
    }));
    const controlled = await kysely.startTransaction().execute();
    let inControlled: { rows: unknown; txid: unknown };
    try {
      inControlled = {
        rows: await fromKysely(controlled).query(TEXT, ['x']),
        txid: (await fromKysely(controlled).query<{ txid: string }>(txid))[0]?.txid,
      };
    } finally {
      await controlled.rollback().execute();
    }
    const outside = (await fromKysely(kysely).query<{ txid: string }>(txid))[0]?.txid;
    expect({
      inTransaction,
      controlledRows: inControlled.rows,
      sameTxid: inControlled.txid === outside,
    }).toEqual({
      inTransaction: { rows: ROWS, joined: true },
      controlledRows: ROWS,
      sameTxid: false,
    });
  });

  it('an emit on the application Transaction returns its id and commits or rolls back with it', async () => {
    const kept = await kysely
      .transaction()
      .execute((trx) => emit(trx, { type: 'plugins.kept', destination: 'orders', payload: {} }));
    const rolledBack = await kysely
      .transaction()
      .execute(async (trx) => {
        const { id } = await emit(trx, { type: 'plugins.rolled-back', destination: 'orders', payload: {} });
        // Inside the transaction: visible to it, and gone with its rollback.
        const seen = await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM outbox_events WHERE id = ${id}::uuid`
          .execute(trx.withoutPlugins())
          .then((r) => r.rows[0]?.n);
        throw Object.assign(new Error('roll back'), { id, seen });
      })
      .catch((error: { id: string; seen: number }) => error);
    const stored = await t.db.query<{ event_type: string }>(
      'SELECT event_type FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY event_type',
      [[kept.id, rolledBack.id]],
    );
    expect({ seen: rolledBack.seen, stored }).toEqual({ seen: 1, stored: [{ event_type: 'plugins.kept' }] });
  });

  it("a WithSchemaPlugin (db.withSchema) does not redirect ferry's text", async () => {
    await t.db.execute('CREATE SCHEMA elsewhere');
    await t.db.execute('CREATE TABLE elsewhere.outbox_events (LIKE public.outbox_events INCLUDING ALL)');
    const { id } = await emit(kysely.withSchema('elsewhere'), {
      type: 'plugins.schema',
      destination: 'orders',
      payload: {},
    });
    const [counts] = await t.db.query<{ public: number; elsewhere: number }>(
      `SELECT (SELECT count(*)::int FROM public.outbox_events WHERE id = $1::uuid) AS public,
              (SELECT count(*)::int FROM elsewhere.outbox_events) AS elsewhere`,
      [id],
    );
    expect(counts).toEqual({ public: 1, elsewhere: 0 });
  });
});
