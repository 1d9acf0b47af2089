import { InboxLeaseLostError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('inbox worker lease (the shared lease kit)', () => {
  it('interrupts a handler whose renewals hang before its lease can expire in the database, and rolls its writes back', async () => {
    await t.db.execute('CREATE TABLE IF NOT EXISTS lease_effects (receipt_id uuid PRIMARY KEY)');
    let aborted: { reason: unknown; leaseStillValid: boolean } | undefined;
    const inbox = makeInbox(
      t.prisma,
      {
        worker: { leaseMs: 3_000, heartbeatIntervalMs: 1_000, transactionTimeoutMs: 30_000 },
        handlers: {
          hang: async (_payload, context) => {
            await context.tx.$executeRawUnsafe(
              'INSERT INTO lease_effects VALUES ($1::uuid)',
              context.receiptId,
            );
            await new Promise<void>((resolve) =>
              context.signal.addEventListener('abort', () => resolve(), { once: true }),
            );
            const [row] = await t.db.query<{ valid: boolean }>(
              'SELECT lease_expires_at > now() AS valid FROM ferry_inbox_receipts WHERE id = $1::uuid',
              [context.receiptId],
            );
            aborted = { reason: context.signal.reason, leaseStillValid: row?.valid === true };
            throw context.signal.reason;
          },
        },
      },
      { ops: { renew: () => new Promise<boolean>(() => undefined) } },
    );
    const { record } = await inbox.accept(message({ consumer: 'hang' }));
    const run = inbox.runOnce();
    const seen = await waitFor('the handler signal to abort', async () => aborted, 5_000);
    expect(seen.reason).toBeInstanceOf(InboxLeaseLostError);
    expect(seen.leaseStillValid).toBe(true);
    expect(await run).toMatchObject({ claimed: 1, completed: 0 });
    expect(await t.db.query('SELECT 1 FROM lease_effects WHERE receipt_id = $1::uuid', [record.id])).toEqual(
      [],
    );
    await inbox.close();
  });
});
