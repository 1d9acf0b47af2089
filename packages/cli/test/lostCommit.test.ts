/**
 * `ferry outbox retry` whose COMMIT answer is lost while PostgreSQL cannot be asked afterwards
 * either: exit 1 with FERRY_OUTCOME_UNKNOWN and a hint to look before acting again, not the
 * "retry" hint of a timeout (the change was applied).
 */
import { emit } from '@ferry/core';
import { runCli } from '@ferry/cli';
import { commitSwallowingProxy } from '../../../test-support/commitSwallowingProxy';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a retry whose outcome is unknown exits 1 with FERRY_OUTCOME_UNKNOWN and says to list before acting again', async () => {
  await emit(t.db, { type: 'lost-commit', payload: {}, tenantId: 'acme' });
  const [event] = await t.db.query<{ id: string }>(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now() RETURNING id::text`,
  );
  const proxy = await commitSwallowingProxy();
  try {
    proxy.arm({ everything: true });
    const io = captureIo();
    const code = await runCli(
      [
        'outbox',
        'retry',
        event!.id,
        '--tenant',
        'acme',
        '--statement-timeout',
        '500ms',
        '--database-url',
        proxy.url(t.url),
      ],
      io,
    );
    expect(proxy.swallowed()).toBe(true);
    expect(code).toBe(1);
    expect(io.errors[0]).toMatch(/^ferry outbox retry: FERRY_OUTCOME_UNKNOWN: /);
    expect(io.errors[1]).toBe('hint: the change may have been applied: list before acting again');
  } finally {
    proxy.heal();
    proxy.close();
  }
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    event!.id,
  ]);
  expect(row?.status).toBe('PENDING');
});
