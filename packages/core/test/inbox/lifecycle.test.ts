import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow, waitFor } from './helpers';

describe('inbox initialize() and concurrent replays', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('initialize() fails with FERRY_SCHEMA_NOT_READY on a database without the schema and starts nothing', async () => {
    const bare = await createTestDatabase({ migrate: false });
    try {
      const inbox = makeInbox(bare.prisma, {
        worker: { enabled: true },
        handlers: { orders: async () => undefined },
      });
      await expect(inbox.initialize()).rejects.toMatchObject({
        code: 'FERRY_SCHEMA_NOT_READY',
        missing: expect.arrayContaining(['table:ferry_inbox_receipts']),
      });
      await inbox.close();
    } finally {
      await bare.drop();
    }
  });

  it('initialize() starts an enabled worker that processes without runOnce()', async () => {
    const inbox = makeInbox(t.prisma, {
      worker: { enabled: true },
      handlers: { 'c-init': async () => undefined },
    });
    await inbox.initialize();
    try {
      const { record } = await inbox.accept(message({ consumer: 'c-init' }));
      await waitFor('completed by the polling worker', async () => {
        return (await receiptRow(t, record.id)).status === 'COMPLETED';
      });
    } finally {
      await inbox.close();
    }
    await expect(inbox.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  });

  it('warns once when worker.enabled is set, receipts are accepted, and initialize() never ran', async () => {
    const warnings: string[] = [];
    const ignore = () => undefined;
    const logger = {
      debug: ignore,
      info: ignore,
      error: ignore,
      warn: (...args: unknown[]) => void warnings.push(args.map((arg) => JSON.stringify(arg)).join(' ')),
    };
    const forgotten = makeInbox(
      t.prisma,
      { logger, worker: { enabled: true }, handlers: { 'c-forgot': async () => undefined } },
      { idleWorkerWarningMs: 50 },
    );
    await forgotten.accept(message({ consumer: 'c-forgot' }));
    await forgotten.accept(message({ consumer: 'c-forgot' }));
    await waitFor('the idle-worker warning', async () => warnings.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(warnings).toEqual([expect.stringMatching(/initialize\(\) was never called/)]);

    // Initialized (or started explicitly): no warning. initialize() before the acceptance: after
    // it, an initialize() slower than the 50 ms bound (a loaded machine) warned as it should.
    const started = makeInbox(
      t.prisma,
      { logger, worker: { enabled: true }, handlers: { 'c-started': async () => undefined } },
      { idleWorkerWarningMs: 50 },
    );
    await started.initialize();
    await started.accept(message({ consumer: 'c-started' }));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(warnings).toHaveLength(1);
  });

  it('creates one replay when the same request is sent concurrently from several clients, and one per distinct request', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { 'c-src': async () => undefined } });
    const { record } = await inbox.accept(message({ consumer: 'c-src' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    const admins = [new InboxAdmin(t.prisma), new InboxAdmin(t.newClient()), new InboxAdmin(t.newClient())];
    const source = (await admins[0]!.forTenant('acme').get(record.id))!;
    const base = {
      id: source.id,
      expectedVersion: source.rowVersion,
      targetConsumer: 'c-src',
      actor: 'op',
      reason: 'rebuild',
    };
    const requestId = randomUUID();
    const same = await Promise.all(
      Array.from({ length: 12 }, (_, i) => admins[i % 3]!.forTenant('acme').replay({ ...base, requestId })),
    );
    expect(same.filter((r) => r.kind === 'accepted')).toHaveLength(1);
    expect(new Set(same.map((r) => r.record.id)).size).toBe(1);
    const distinct = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        admins[i % 3]!.forTenant('acme').replay({ ...base, requestId: randomUUID() }),
      ),
    );
    expect(distinct.every((r) => r.kind === 'accepted')).toBe(true);
    expect(new Set(distinct.map((r) => r.record.id)).size).toBe(6);
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE replay_source_id = $1::uuid',
      [source.id],
    );
    expect(row?.n).toBe(7);
    expect(await receiptRow(t, source.id)).toMatchObject({
      status: 'COMPLETED',
      row_version: source.rowVersion,
    });
  });
});
