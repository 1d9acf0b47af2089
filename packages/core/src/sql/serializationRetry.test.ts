import { FerryError } from '../errors';
import type { SqlExecutor, TransactionOptions } from './executor';
import { withSerializationRetry } from './serializationRetry';

/** An executor (pure logic: no database) whose transactions fail with `failures` in turn, then succeed. */
function failingThen(failures: unknown[]): { db: SqlExecutor; runs: (TransactionOptions | undefined)[] } {
  const runs: (TransactionOptions | undefined)[] = [];
  const db: SqlExecutor = {
    inTransaction: false,
    query: async () => [],
    execute: async () => 0,
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
      runs.push(options);
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return work(db);
    },
  };
  return { db, runs };
}

describe('withSerializationRetry', () => {
  // CI found it (review 29's purge case at SERIALIZABLE): Prisma named the refusal only by its
  // driver adapter kind, which the translated FerryError carries as details.driverCode.
  it('runs again, at READ COMMITTED, a transaction refused with a translated write conflict', async () => {
    const refusal = new FerryError(
      'FERRY_DATABASE_UNAVAILABLE',
      'inbox admin failed: TransactionWriteConflict',
      {
        details: { sqlState: null, driverCode: 'TransactionWriteConflict' },
      },
    );
    const { db, runs } = failingThen([refusal]);
    await expect(withSerializationRetry(db, 1_000).transaction(async () => 'done')).resolves.toBe('done');
    expect(runs.map((options) => options?.isolation)).toEqual([undefined, 'read committed']);
  });

  it('runs a deadlock again as it ran, and later transactions still at the default', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { db, runs } = failingThen([deadlock]);
    const retrying = withSerializationRetry(db, 1_000);
    await retrying.transaction(async () => 1);
    await retrying.transaction(async () => 2);
    expect(runs.map((options) => options?.isolation)).toEqual([undefined, undefined, undefined]);
  });

  it('gives up after five runs, and never runs again a failure of another kind', async () => {
    const refused = () => Object.assign(new Error('could not serialize access'), { code: '40001' });
    const always = failingThen(Array.from({ length: 9 }, refused));
    await expect(withSerializationRetry(always.db, 1_000).transaction(async () => 0)).rejects.toThrow(
      'could not serialize access',
    );
    expect(always.runs).toHaveLength(5);
    const other = failingThen([Object.assign(new Error('unique violation'), { code: '23505' })]);
    await expect(withSerializationRetry(other.db, 1_000).transaction(async () => 0)).rejects.toThrow(
      'unique',
    );
    expect(other.runs).toHaveLength(1);
  });
});
