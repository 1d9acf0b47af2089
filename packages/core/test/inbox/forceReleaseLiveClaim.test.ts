// Review finding (failed first).
import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { claimReceipts } from '../../src/inbox/sql/claim';
import { makeInbox, message, receiptRow } from './helpers';

/**
 * The operator's release racing a handler that is running, its lease renewed by
 * a live worker. The spec: "admin operations never cancel an active PROCESSING callback"; a
 * receipt must never run twice at once. `release({ claimToken, force: true })` takes the claim of
 * a worker that is alive (nothing checks that it is dead: its lease is unexpired and renewing),
 * and the next claim runs the handler a second time while the first still runs.
 */
describe('force release of a live claim', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('never runs one receipt in two handlers at once', async () => {
    const tenantId = `t-${randomUUID()}`;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let running = 0;
    let most = 0;
    let entered = 0;
    const handler = async () => {
      running += 1;
      entered += 1;
      most = Math.max(most, running);
      try {
        await gate;
      } finally {
        running -= 1;
      }
    };
    const first = makeInbox(t.prisma, { handlers: { orders: handler } });
    const second = makeInbox(t.prisma, { handlers: { orders: handler } });
    const { record } = await first.accept(message({ tenantId }));

    const firstRun = first.runOnce();
    await waitUntil('the first handler runs', () => entered === 1, { timeoutMs: 20_000, intervalMs: 10 });
    const claimToken = String((await receiptRow(t, record.id)).claim_token);

    const released = await new InboxAdmin(t.prisma)
      .forTenant(tenantId)
      .release({ claimToken, force: true, actor: 'ops', reason: 'looks stuck' });

    // The second worker's pass: it either runs the handler (a second concurrent run) or finds
    // nothing to claim and ends.
    const secondRun = second.runOnce();
    const secondEntered = waitUntil('a second handler run', () => entered === 2, {
      timeoutMs: 20_000,
      intervalMs: 10,
    }).catch(() => undefined);
    await Promise.race([secondRun, secondEntered]);
    open();
    await Promise.allSettled([firstRun, secondRun]);

    expect({ ...released, mostAtOnce: most }).toEqual({ released: [], running: [record.id], mostAtOnce: 1 });
  });

  it('still releases a named claim whose handler never started (a dead worker)', async () => {
    const tenantId = `t-${randomUUID()}`;
    const consumer = `dead-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, { handlers: { [consumer]: async () => undefined } });
    const { record } = await inbox.accept(message({ tenantId, consumer }));
    const [claim] = await claimReceipts(t.db, [consumer], 10, 60_000, 8);
    expect(claim?.id).toBe(record.id);
    const released = await new InboxAdmin(t.prisma)
      .forTenant(tenantId)
      .release({ claimToken: claim!.claimToken, force: true, actor: 'ops', reason: 'worker died' });
    expect(released).toEqual({ released: [record.id], running: [] });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'PENDING', claim_token: null });
  });
});
