/**
 * Review 90 (failed first): kyselyTransactions and fromKysely take their argument unchecked.
 *
 * User: a configuration loader leaves the Kysely instance out (`kyselyTransactions(app.db)` with
 * `app.db` undefined), or the application hands the adapter the `Transaction` it has at hand
 * instead of the instance. Contract (README, Options): a required argument left out or of the
 * wrong type fails at construction with FERRY_CONFIG_INVALID naming it, as pgTransactions' and
 * prismaTransactions' do; pgTransactions refuses a single client, on which ferry's own statements
 * and the handler transactions cannot run beside each other.
 *
 * Instead: `kyselyTransactions(undefined)` and `fromKysely(undefined)` throw a TypeError ("Cannot
 * read properties of undefined (reading 'isTransaction')"); `kyselyTransactions({})` is accepted
 * and fails later; and `kyselyTransactions(trx)` is accepted: the inbox's acceptance and claims
 * run inside the application's transaction, and initialize() fails with a retriable
 * FERRY_DATABASE_ERROR ("calling the transaction method for a Transaction is not supported"),
 * which a start-up retry loop retries for ever.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { FerryConfigError } from '@ferry/core';
import { fromKysely, kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

const refused = (option: string, message: RegExp) =>
  expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option, message: expect.stringMatching(message) });

describe('review90: the Kysely adapter and executor check their argument', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an object that is no Kysely', {}],
    ['a connection string', 'postgres://localhost/app'],
  ])('kyselyTransactions and fromKysely refuse %s with FERRY_CONFIG_INVALID on db', (_what, value) => {
    expect(() => kyselyTransactions(value as never)).toThrow(FerryConfigError);
    expect(() => kyselyTransactions(value as never)).toThrow(refused('db', /Kysely instance/));
    expect(() => fromKysely(value as never)).toThrow(refused('db', /Kysely/));
  });

  describe('given a Kysely Transaction', () => {
    let t: TestDatabase;
    let db: Kysely<Record<string, never>>;
    beforeAll(async () => {
      t = await createTestDatabase();
      db = new Kysely({
        dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 2 })) }),
      });
    });
    afterAll(async () => {
      await db.destroy();
      await t.drop();
    });

    it('kyselyTransactions refuses it before anything is sent; fromKysely joins it', async () => {
      await db.transaction().execute(async (trx) => {
        expect(() => kyselyTransactions(trx)).toThrow(refused('db', /Transaction/));
        expect(fromKysely(trx).inTransaction).toBe(true);
      });
    });
  });
});
