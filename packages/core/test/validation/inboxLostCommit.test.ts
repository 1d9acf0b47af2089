/**
 * lostCommitAnswer.test.ts on the inbox admin: a requeue whose COMMIT answer is lost is reported
 * with its result (PostgreSQL says it committed), audited once, and a repeat with the same expected
 * version is still refused (state conflict), not applied twice.
 */
import pg from 'pg';
import { InboxAdmin, InboxPermanentError, isFerryError } from '@ferry/core';
import { commitSwallowingProxy } from '../../../../test-support/commitSwallowingProxy';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a requeue whose COMMIT answer is lost returns its result, is audited once, and a repeat is a state conflict', async () => {
  const inbox = makeInbox(t.prisma, {
    handlers: {
      payments: async () => {
        throw new InboxPermanentError('rejected');
      },
    },
  });
  const { record } = await inbox.accept(message({ consumer: 'payments', tenantId: 'acme' }));
  await inbox.runOnce();
  const direct = new InboxAdmin(t.prisma).forTenant('acme');
  const dead = await direct.get(record.id);
  expect(dead?.status).toBe('DEAD');

  const proxy = await commitSwallowingProxy();
  const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 4 });
  pool.on('error', () => undefined);
  try {
    const request = {
      id: record.id,
      expectedVersion: dead!.rowVersion,
      actor: 'night-operator',
      reason: 'paged',
    };
    proxy.arm();
    const requeued = await new InboxAdmin(pool, { statementTimeoutMs: 500 })
      .forTenant('acme')
      .requeue(request);
    expect(proxy.swallowed()).toBe(true);
    expect(requeued).toMatchObject({ id: record.id, rowVersion: dead!.rowVersion + 1 });
    expect(pool.totalCount - pool.idleCount).toBe(0);
    const audit = await t.db.query<{ outcome: string }>(
      `SELECT outcome FROM ferry_operator_audit WHERE action = 'inbox.requeue' ORDER BY id`,
    );
    expect(audit.map((a) => a.outcome)).toEqual(['applied']);
    const again = await direct.requeue(request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFerryError(again, 'FERRY_STATE_CONFLICT')).toBe(true);
  } finally {
    proxy.close();
    await pool.end().catch(() => undefined);
  }
});
