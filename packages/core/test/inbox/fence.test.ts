import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  insertBusiness,
  makeInbox,
  message,
  receiptRow,
  recorder,
  waitFor,
} from './helpers';

describe('inbox completion fence', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  it('rejects the completion of a handler whose lease expired during its transaction, even with no other owner', async () => {
    const { events, observer } = recorder();
    const inbox = makeInbox(
      t.prisma,
      {
        observer,
        worker: { leaseMs: 300, heartbeatIntervalMs: 100 },
        handlers: {
          'c-expired': async (_p, context) => {
            await insertBusiness(context);
            await waitFor('the lease expired on the database clock', async () => {
              const [row] = await t.db.query<{ expired: boolean }>(
                'SELECT lease_expires_at < clock_timestamp() AS expired FROM ferry_inbox_receipts WHERE id = $1::uuid',
                [context.receiptId],
              );
              return row?.expired === true;
            });
          },
        },
      },
      // A heartbeat that believes it renewed but never extends the lease.
      { ops: { renew: async () => true } },
    );
    const { record } = await inbox.accept(message({ consumer: 'c-expired' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0, leaseLost: 1 });
    expect(await businessCount(t, record.id)).toBe(0);
    const row = await receiptRow(t, record.id);
    expect(row.status).toBe('PROCESSING');
    expect(row.completed_at).toBeNull();
    expect(events.some((e) => e.type === 'completed')).toBe(false);
    expect(events.some((e) => e.type === 'lease-lost')).toBe(true);
  });

  it('completes a handler that finishes within its lease without any heartbeat renewal', async () => {
    let renewals = 0;
    const inbox = makeInbox(
      t.prisma,
      {
        worker: { leaseMs: 60_000, heartbeatIntervalMs: 29_000 },
        handlers: { 'c-short': async (_p, context) => insertBusiness(context) },
      },
      { ops: { renew: async () => ((renewals += 1), true) } },
    );
    const { record } = await inbox.accept(message({ consumer: 'c-short' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    expect(renewals).toBe(0);
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', lease_expires_at: null });
    expect(await businessCount(t, record.id)).toBe(1);
  });
});
