/**
 * Review finding (237158b; failed first): emit() checked tenantId with textFault alone.
 */
import { emit, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { identifierFault } from '../../src/validate/text';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/**
 * What is wrong: emit() checks tenantId only with textFault (NUL, lone surrogates), while every
 * ferry consumer checks the tenant header with identifierFault (transport/tenant.ts named()) and
 * dead-letters the message as tenant_unresolved. So emit() commits an event no ferry consumer
 * will ever accept: the producer gets no error, the message ends up dead-lettered on every
 * consumer. The rule must hold where the tenant is written, not only where it is read.
 */
describe.each([
  ['only whitespace', ' '],
  ['only a zero-width space', '\u200b'],
  ['a line separator', 'acme\u2028corp'],
  ['a control character', 'acme\ncorp'],
  ['a right-to-left override', 'acme\u202e'],
])('emit() refuses a tenantId that is %s (a consumer would dead-letter it)', (_what, tenantId) => {
  it('throws FerryValidationError and writes nothing', async () => {
    await t.db.execute('DELETE FROM outbox_events');
    // consumer side, for reference: refused
    expect(identifierFault(tenantId)).not.toBeNull();
    await expect(emit(t.db, { type: 't', payload: {}, tenantId })).rejects.toBeInstanceOf(
      FerryValidationError,
    );
    const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events');
    expect(row?.n).toBe(0);
  });
});
