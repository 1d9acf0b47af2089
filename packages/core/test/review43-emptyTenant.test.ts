/**
 * Review 43 (tenant scopes), failing on main.
 *
 * What I did: a consumer whose `tenant` function reads the tenant from the routing key, the first
 * word of `acme.order.created` (the README's own example of a tenant function, review 20):
 * `(m) => m.fields.routingKey.split('.')[0] ?? null`. A producer publishes with the routing key
 * `.order.created` (a topic binding `*.order.*` matches an empty first word), so the function
 * answers the empty string. Every transport resolves it through resolveTenant of
 * @ferry/core/transport; the inbox takes global messages too (`global: 'shared'`).
 *
 * What happened: resolveTenant turns a function's '' into null (`nonEmptyValue(value) ?? null`),
 * the global scope, and the message is accepted and committed there: work of no tenant the
 * function named, listed by forGlobal(), run with an empty tenant setting. A function answering
 * ' ' or '\u200b' (shows nothing as well) is dead-lettered `tenant_unresolved`, and
 * `accept({ tenantId: '' })` is refused, so only the empty string slips into another scope.
 *
 * What should happen: the core README ("Values emit and accept refuse") says a tenant that is
 * empty or shows nothing "is `tenant_unresolved` on every transport (from the header or a tenant
 * function)", and the transports' READMEs say the function's "result is the tenant (null =
 * global)": null is the only way a function chooses the global scope. '' must be
 * `tenant_unresolved`, never the global scope.
 *
 * Fix direction: in fromFunction (src/transport/tenant.ts) return the string as it is and let
 * named() refuse it (identifierFault('') says "must not be empty"); only null / undefined mean
 * global.
 */
import { INBOX_TABLE, InboxAdmin } from '@ferry/core';
import { resolveTenant } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

describe('review43: a tenant function answering the empty string', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const byRoutingKey = (m: { routingKey: string }) => m.routingKey.split('.')[0] ?? null;

  it('names no tenant, as a blank answer does: tenant_unresolved, never the global scope', () => {
    // Shows nothing either way; the first is refused, the second should be too.
    expect(resolveTenant(() => ' ', {}, undefined)).toMatchObject({ ok: false, reason: 'tenant_unresolved' });
    expect(resolveTenant(byRoutingKey, { routingKey: '.order.created' }, undefined)).toMatchObject({
      ok: false,
      reason: 'tenant_unresolved',
    });
  });

  it('is not accepted into the global scope of an inbox that takes global messages', async () => {
    const inbox = makeInbox(t.prisma, { global: 'shared', handlers: { orders: async () => undefined } });
    const resolved = resolveTenant(byRoutingKey, { routingKey: '.order.created' }, undefined);
    // What a transport does with a resolution that is ok: offers the message under its tenant.
    const offered = resolved.ok
      ? await inbox.acceptMany([message({ messageId: 'r43-empty', tenantId: resolved.tenantId })])
      : [];
    const global = await new InboxAdmin(t.prisma).forGlobal().list();
    const rows = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE message_id = 'r43-empty'`,
    );
    // On main: accepted, one receipt, listed in the global scope.
    expect({
      offered: offered.map((r) => r.kind),
      stored: rows[0]!.n,
      global: global.records.length,
    }).toEqual({ offered: [], stored: 0, global: 0 });
  });
});
