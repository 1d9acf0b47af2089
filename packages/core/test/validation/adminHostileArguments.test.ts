/**
 * Admin argument values the argument checks (optionChecks.ts) let through on 19d306e (found by its
 * review): a sparse ids array, a Date PostgreSQL cannot store, and values whose own methods throw
 * (a fake Date, a null-prototype object whose toJSON throws, a revoked proxy), which escaped as a raw
 * TypeError. Each is refused with FERRY_VALIDATION_FAILED naming the argument, before any SQL.
 */
import { createOutboxAdmin, isFerryError } from '@ferry/core';
import type { SqlExecutor } from '../../src/sql/executor';
import { useAdminDatabase } from '../../../../test-support/adminFixture';

const database = useAdminDatabase();

async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await call() };
  } catch (error) {
    return isFerryError(error)
      ? { code: error.code, field: (error as { field?: string }).field, message: error.message }
      : { error: String(error) };
  }
}

it('retryMany with holes in the ids array is refused (uuidListArgument: forEach skips holes)', async () => {
  const f = await database.fixture();
  const admin = createOutboxAdmin(database.t().db);
  const before = await database.state();
  // eslint-disable-next-line no-sparse-arrays
  const ids = [f.failed, , f.failed] as unknown as string[];
  const result = await outcome(() => admin.retryMany(ids));
  // On 19d306e: [{applied}, undefined, {applied}] (forEach skips holes).
  expect(result).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'ids[1]' });
  expect(await database.state()).toEqual(before);
});

it('a Date PostgreSQL cannot store is refused as an argument, not a database error', async () => {
  await database.fixture();
  const admin = createOutboxAdmin(database.t().db);
  const before = await database.state();
  const ancient = new Date(-8_639_000_000_000_000); // valid in JavaScript, 271821 BC: PostgreSQL 22008
  const purge = await outcome(() => admin.purgeSent({ before: ancient }));
  const list = await outcome(() => admin.list({ createdBefore: ancient }));
  // On 19d306e: PostgreSQL's 22008, FERRY_VALIDATION_FAILED without a field, the database reached.
  expect({ purge, list }).toMatchObject({
    purge: { code: 'FERRY_VALIDATION_FAILED', field: 'before' },
    list: { code: 'FERRY_VALIDATION_FAILED', field: 'createdBefore' },
  });
  expect(await database.state()).toEqual(before);
});

const notReached = (): Promise<never> => Promise.reject(new Error('the database was reached'));
const db: SqlExecutor = {
  inTransaction: false,
  query: notReached,
  execute: notReached,
  transaction: notReached,
};
const unreached = createOutboxAdmin(db);

it.each([
  // On 19d306e: TypeError "this is not a Date object." (dateArgument calls getTime on it)
  [
    'an object of Date.prototype',
    () => unreached.list({ createdBefore: Object.create(Date.prototype) as Date }),
  ],
  // On 19d306e: TypeError "Cannot convert object to primitive value" (received: String() of a null-prototype object)
  [
    'a null-prototype object whose toJSON throws',
    () =>
      unreached.list({
        limit: Object.assign(Object.create(null) as object, {
          toJSON: () => {
            throw new Error('x');
          },
        }) as never,
      }),
  ],
  // On 19d306e: TypeError "Cannot perform 'IsArray' on a proxy that has been revoked"
  [
    'a revoked proxy',
    () => {
      const r = Proxy.revocable({}, {});
      r.revoke();
      return unreached.list({ limit: r.proxy as never });
    },
  ],
  [
    'a revoked proxy as the arguments object',
    () => {
      const r = Proxy.revocable({}, {});
      r.revoke();
      return unreached.list(r.proxy as never);
    },
  ],
  ['a sparse id list', (): Promise<unknown> => unreached.retryMany(new Array<string>(2))],
])('%s is refused as FERRY_VALIDATION_FAILED', async (_name, call) => {
  const error = await Promise.resolve()
    .then(call)
    .catch((e: unknown) => e);
  expect(isFerryError(error, 'FERRY_VALIDATION_FAILED')).toBe(true);
});

it('dates of years 1 to 9999 are taken; a millisecond outside is refused before any SQL', async () => {
  await database.fixture();
  const admin = createOutboxAdmin(database.t().db);
  const earliest = new Date('0001-01-01T00:00:00.000Z');
  const latest = new Date('9999-12-31T23:59:59.999Z');
  await expect(admin.list({ createdBefore: earliest })).resolves.toMatchObject({ items: [] });
  await expect(admin.list({ createdBefore: latest })).resolves.toBeDefined();
  await expect(admin.purgeSent({ before: earliest })).resolves.toBeDefined();
  const before = await database.state();
  for (const date of [new Date(earliest.getTime() - 1), new Date(latest.getTime() + 1)]) {
    await expect(admin.purgeSent({ before: date })).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'before',
    });
  }
  expect(await database.state()).toEqual(before);
});
