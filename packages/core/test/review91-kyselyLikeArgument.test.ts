/**
 * Review 91 (failed first): emit and the admins given an object that looks like a Kysely
 * transaction (an `executeQuery()` and an `isTransaction` flag) but lacks `getExecutor()`.
 *
 * User: a wrapper of their own around a Kysely transaction (a tracing or test double exposing the
 * query methods it needs), handed to `emit` or to `createOutboxAdmin`. Review 90 made `fromKysely`
 * refuse what is no Kysely with FERRY_CONFIG_INVALID on `db`, which is right for its own argument.
 * Contract (README, option checks): a transaction given to `emit` at a call is invalid input,
 * FERRY_VALIDATION_FAILED on `tx`; a client given to an admin is refused naming that option.
 * What happened: both got FERRY_CONFIG_INVALID on `db`, an option neither call has: emit's caller,
 * told its configuration is wrong, looks for a `db` it never passed.
 * What should happen: emit refuses it as invalid input on `tx`, the admin as configuration on
 * `client`, each saying what is missing.
 */
import { createOutboxAdmin, emit, FerryConfigError, FerryValidationError } from '@ferry/core';

const kyselyLike = { isTransaction: true, executeQuery: async () => ({ rows: [] }) };

describe('an object shaped like a Kysely transaction without getExecutor()', () => {
  it('is refused by emit as invalid input on tx', async () => {
    const refused = emit(kyselyLike as never, { type: 'order.placed', payload: {} });
    await expect(refused).rejects.toThrow(FerryValidationError);
    await expect(refused).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'tx',
      message: expect.stringContaining('getExecutor()'),
    });
  });

  it('is refused by createOutboxAdmin as configuration on client', () => {
    expect(() => createOutboxAdmin(kyselyLike as never)).toThrow(FerryConfigError);
    expect(() => createOutboxAdmin(kyselyLike as never)).toThrow(
      expect.objectContaining({ option: 'client', message: expect.stringContaining('getExecutor()') }),
    );
  });
});
