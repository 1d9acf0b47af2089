/**
 * A consumer's `tenant: { fixed }` is checked once at attach (checkTenantSource, every transport
 * and the in-memory consumer) by the rule acceptance applies to a tenant id (tenantIdFault):
 * a fixed tenant acceptance refuses would attach fine and then every message of the queue or
 * topic would be refused as invalid and dead-lettered.
 */
import { FerryConfigError } from '@ferry/core';
import { checkTenantSource } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from '../inbox/helpers';

describe('Review finding (failed first): a fixed tenant acceptance refuses', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it.each([
    ['256 characters', 'x'.repeat(256)],
    ['a NUL', 'acme\u0000'],
    ['an unpaired surrogate', 'acme\ud800'],
    ['only whitespace', ' '],
  ])('with %s is refused at attach, as acceptance refuses it', async (_, fixed) => {
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const [accepted] = await inbox.acceptMany([message({ tenantId: fixed })]);
    expect(accepted?.kind).toBe('invalid');
    expect(() => checkTenantSource({ fixed })).toThrow(FerryConfigError);
  });

  it('with 255 characters is taken at attach, as acceptance takes it', async () => {
    const fixed = 'x'.repeat(255);
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const [accepted] = await inbox.acceptMany([message({ tenantId: fixed })]);
    expect(accepted?.kind).toBe('accepted');
    expect(checkTenantSource({ fixed })).toEqual({ fixed });
  });
});
