import { createOutboxAdmin, FerryValidationError, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

/**
 * Review finding (failed first): both admins' forTenant() took a tenant id emit() refuses (a
 * line break, an escape sequence), and the audit rows of that scope kept it: `ferry audit list`
 * printed forged lines. A scope's tenant id follows the rule of every tenant id (identifierFault).
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe.each([
  ['outbox', (tenant: string) => createOutboxAdmin(t.db).forTenant(tenant)],
  ['inbox', (tenant: string) => new InboxAdmin(t.prisma).forTenant(tenant)],
])('%s forTenant', (_kind, forTenant) => {
  it.each([
    [
      'a line break',
      'acme\n9999 2026-01-01T00:00:00.000Z outbox.purge-sent',
      /control character \(U\+000A\)/,
    ],
    ['an escape sequence', 'acme\u001b]0;owned\u0007', /control character \(U\+001B\)/],
    ['a C1 control', 'acme\u009b2J', /control character \(U\+009B\)/],
    ['a line separator', 'acme\u2028x', /line break/],
    ['a bidirectional override', 'order-\u202e1-tnuocca', /bidirectional control/],
    ['only whitespace', '   ', /only whitespace/],
    ['only invisible characters', '\u200b\u200b', /only invisible/],
  ])('refuses a tenant id with %s', (_what, tenant, reason) => {
    let failure: unknown;
    try {
      forTenant(tenant);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(FerryValidationError);
    expect(failure).toMatchObject({ code: 'FERRY_VALIDATION_FAILED', field: 'tenantId' });
    expect((failure as Error).message).toMatch(reason);
  });

  it('takes a tenant id emit() takes', () => {
    expect(() => forTenant('acme-\u00e9\u{1F468}\u200d\u{1F469}')).not.toThrow();
  });
});
