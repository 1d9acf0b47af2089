import { createAuditLog, FerryValidationError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

/**
 * Review 76 (failed first): the audit trail's tenant filter (`tenantId`, or a `tenant:<id>`
 * scope) took any text and answered an empty trail, while both admins' forTenant() refuse the
 * same id (assertTenantId). A tenant filter follows the rule of every tenant id.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const BAD = [
  ['empty', ''],
  ['an escape sequence', 'acme\u001b[2J'],
  ['300 characters', 'a'.repeat(300)],
  ['only whitespace', '   '],
] as const;

describe('audit list refuses a tenant id every tenant id rule refuses', () => {
  it.each(BAD)('tenantId %s', async (_what, tenant) => {
    await expect(createAuditLog(t.db).list({ tenantId: tenant })).rejects.toMatchObject({
      constructor: FerryValidationError,
      field: 'tenantId',
    });
  });

  it.each(BAD)('scope tenant:<%s>', async (_what, tenant) => {
    await expect(createAuditLog(t.db).list({ scope: `tenant:${tenant}` })).rejects.toMatchObject({
      constructor: FerryValidationError,
      field: 'scope',
    });
  });

  it('a real tenant id, and the fixed scopes, list', async () => {
    const log = createAuditLog(t.db);
    await expect(log.list({ tenantId: 'acme' })).resolves.toMatchObject({ items: [] });
    await expect(log.list({ scope: 'tenant:acme' })).resolves.toMatchObject({ items: [] });
    await expect(log.list({ scope: 'operator' })).resolves.toMatchObject({ items: [] });
    await expect(log.list({ scope: 'global' })).resolves.toMatchObject({ items: [] });
  });
});
