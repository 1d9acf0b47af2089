import { randomBytes } from 'node:crypto';
import { createInboxTenancyContext, fromPrisma, type InboxHandlerContext } from '@ferry/core';
import {
  adminQuery,
  createTestDatabase,
  prismaFor,
  type TestDatabase,
} from '../../../../test-support/database';
import { makeInbox, message, receiptRow, recorder } from './helpers';

describe('inbox tenancy context with PostgreSQL RLS', () => {
  let t: TestDatabase;
  const role = `ferry_app_${randomBytes(5).toString('hex')}`;
  let app: ReturnType<typeof prismaFor>;

  beforeAll(async () => {
    t = await createTestDatabase();
    // The role name is generated from hex digits above; identifiers cannot be bound.
    await adminQuery(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOBYPASSRLS`);
    await t.db.execute(`CREATE TABLE tenant_notes (tenant_id text NOT NULL, note text NOT NULL)`);
    await t.db.execute(`ALTER TABLE tenant_notes ENABLE ROW LEVEL SECURITY`);
    await t.db.execute(
      `CREATE POLICY tenant_isolation ON tenant_notes
       USING (tenant_id = current_setting('app.tenant_id', true))
       WITH CHECK (tenant_id = current_setting('app.tenant_id', true))`,
    );
    await t.db.execute(`INSERT INTO tenant_notes VALUES ('acme', 'seed acme'), ('globex', 'seed globex')`);
    await t.db.execute(`GRANT USAGE ON SCHEMA public TO ${role}`);
    await t.db.execute(`GRANT SELECT, INSERT ON tenant_notes TO ${role}`);
    await t.db.execute(`GRANT SELECT, INSERT, UPDATE ON ferry_inbox_receipts TO ${role}`);
    const url = new URL(t.url);
    url.username = role;
    app = prismaFor(url.toString());
  });

  afterAll(async () => {
    await app.$disconnect();
    await t.drop();
    await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  it('applies RLS policies to the handler transaction of a non-owner role and clears the setting afterwards', async () => {
    const seen: Array<{ tenant: string | null; visible: string[]; user: string }> = [];
    const handler = async (payload: Readonly<Record<string, unknown>>, context: InboxHandlerContext) => {
      const db = fromPrisma(context.tx);
      await db.execute('INSERT INTO tenant_notes (tenant_id, note) VALUES ($1, $2)', [
        payload.writeAs,
        'from handler',
      ]);
      const rows = await db.query<{ tenant_id: string }>('SELECT tenant_id FROM tenant_notes');
      const [{ user } = { user: '' }] = await db.query<{ user: string }>('SELECT current_user AS user');
      seen.push({ tenant: context.tenantId, visible: [...new Set(rows.map((r) => r.tenant_id))], user });
    };
    const { events, observer } = recorder();
    const inbox = makeInbox(app, {
      observer,
      handlerContext: createInboxTenancyContext({ setting: 'app.tenant_id' }),
      worker: { maxAttempts: 1 },
      handlers: { notes: handler },
    });
    const own = await inbox.accept(
      message({ consumer: 'notes', tenantId: 'acme', payload: { writeAs: 'acme' } }),
    );
    const cross = await inbox.accept(
      message({ consumer: 'notes', tenantId: 'acme', payload: { writeAs: 'globex' } }),
    );
    for (let i = 0; i < 5 && (await receiptRow(t, cross.record.id)).status === 'PENDING'; i += 1)
      await inbox.runOnce();
    expect(seen).toEqual([{ tenant: 'acme', visible: ['acme'], user: role }]);
    expect(await receiptRow(t, own.record.id)).toMatchObject({ status: 'COMPLETED' });
    const crossRow = await receiptRow(t, cross.record.id);
    expect(crossRow.status).toBe('DEAD');
    expect(crossRow.last_error).toContain('row-level security');
    const [count] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tenant_notes WHERE tenant_id = 'globex'`,
    );
    expect(count?.n).toBe(1);
    expect(events.some((e) => e.type === 'dead')).toBe(true);
    // transaction-local: a later statement on the pool sees no tenant
    const [after] = await app.$queryRawUnsafe<Array<{ v: string | null }>>(
      `SELECT current_setting('app.tenant_id', true) AS v`,
    );
    expect(after?.v ?? '').toBe('');
    const visible = await app.$queryRawUnsafe<unknown[]>('SELECT * FROM tenant_notes');
    expect(visible).toEqual([]);
  });

  it("makes a global receipt DEAD without running its handler unless the adapter says global: 'shared'", async () => {
    const seen: Array<string | null> = [];
    const handler = async (_p: unknown, context: InboxHandlerContext) => {
      const [row] = await fromPrisma(context.tx).query<{ v: string | null }>(
        `SELECT current_setting('app.tenant_id', true) AS v`,
      );
      seen.push(row?.v ?? null);
    };
    const { events, observer } = recorder();
    const rejecting = makeInbox(t.prisma, {
      observer,
      global: 'shared',
      handlerContext: createInboxTenancyContext(),
      handlers: { 'global-reject': handler },
    });
    const rejected = await rejecting.accept(message({ consumer: 'global-reject', tenantId: null }));
    expect(await rejecting.runOnce()).toMatchObject({ dead: 1 });
    expect(seen).toEqual([]);
    const row = await receiptRow(t, rejected.record.id);
    expect(row).toMatchObject({ status: 'DEAD', attempts: 1 });
    expect(row.last_error).toContain('FERRY_GLOBAL_SCOPE_REJECTED');
    expect(events.find((e) => e.type === 'dead')).toMatchObject({ reason: 'permanent' });

    const sharing = makeInbox(t.prisma, {
      global: 'shared',
      handlerContext: createInboxTenancyContext({ global: 'shared' }),
      handlers: { 'global-shared': handler },
    });
    const shared = await sharing.accept(message({ consumer: 'global-shared', tenantId: null }));
    expect(await sharing.runOnce()).toMatchObject({ completed: 1 });
    expect(seen).toEqual(['']);
    expect(await receiptRow(t, shared.record.id)).toMatchObject({ status: 'COMPLETED' });
  });

  it('rejects an unknown global mode at configuration', () => {
    expect(() => createInboxTenancyContext({ global: 'all' as never })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'tenancy.global' }),
    );
  });

  it('rejects a malformed setting name at configuration', () => {
    expect(() => createInboxTenancyContext({ setting: 'no dot; drop' })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'tenancy.setting' }),
    );
  });
});
