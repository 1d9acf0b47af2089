/**
 * Review 155: spec/002, "The adapter sets the service's canonical PostgreSQL tenant setting with
 * transaction-local set_config ... The setting clears on commit or rollback." The rollback half:
 * on a pool of one connection, a handler that fails leaves no tenant on the connection the next
 * statement (another tenant's handler, or the application's own query) runs on.
 */
import { Pool } from 'pg';
import { createInboxTenancyContext, pgTransactions, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { listened } from '../../../../test-support/oneStatement';
import { makeInbox, message } from './helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

it('clears the tenant setting when the handler transaction rolls back', async () => {
  const seen: Array<[string | null, string]> = [];
  const inbox = makeInbox(pgTransactions(pool), {
    handlerContext: createInboxTenancyContext({ setting: 'app.tenant_id' }),
    worker: { concurrency: 1, maxAttempts: 1 },
    handlers: {
      tenanted: async (payload, context) => {
        const { rows } = await context.tx.query<{ v: string }>(
          `SELECT current_setting('app.tenant_id', true) AS v`,
        );
        seen.push([context.tenantId, rows[0]?.v ?? '']);
        if (payload.fail === true) throw new Error('handler failed');
      },
    },
  });
  const failed = await inbox.accept(
    message({ consumer: 'tenanted', tenantId: 'acme', payload: { fail: true } }),
  );
  await inbox.runOnce();
  const [after] = (
    await pool.query<{ v: string | null }>(`SELECT current_setting('app.tenant_id', true) AS v`)
  ).rows;
  expect(after?.v ?? '').toBe('');
  await inbox.accept(message({ consumer: 'tenanted', tenantId: 'globex', payload: { fail: false } }));
  await inbox.runOnce();
  expect(seen).toEqual([
    ['acme', 'acme'],
    ['globex', 'globex'],
  ]);
  expect((await new InboxAdmin(t.prisma).forTenant('acme').get(failed.record.id))?.status).toBe('DEAD');
});
