// Review finding (failed first).
import { randomUUID } from 'node:crypto';
import { InboxAdmin, type InboxRecord } from '@ferry/core';
import { messageIdFault } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow } from './helpers';

/**
 * The operator's replay against a delivery that took its identity first.
 * A replay's receipt was `replay:<request id>` of the target consumer, and a broker delivery could
 * carry that message id too (acceptance refused only empty, invisible or control-character ids):
 * the replay then failed with "the source payload was purged". Replays now take ids under
 * `ferry:`, a prefix acceptance refuses.
 */
describe('replay request ids and delivered message ids', () => {
  let t: TestDatabase;
  let admin: InboxAdmin;
  let inbox: ReturnType<typeof makeInbox>;
  beforeAll(async () => {
    t = await createTestDatabase();
    admin = new InboxAdmin(t.prisma);
    inbox = makeInbox(t.prisma, {
      handlers: { work: async () => undefined, rebuild: async () => undefined },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  async function completed(tenantId: string) {
    const { record } = await inbox.accept(message({ consumer: 'work', tenantId }));
    for (let i = 0; i < 50 && (await receiptRow(t, record.id)).status !== 'COMPLETED'; i += 1)
      await inbox.runOnce();
    const stored = await admin.forTenant(tenantId).get(record.id);
    expect(stored?.status).toBe('COMPLETED');
    return stored!;
  }

  /** The operator's replay of `source` into the rebuild consumer. */
  function replayInRebuild(tenantId: string, source: InboxRecord, requestId: string) {
    return admin.forTenant(tenantId).replay({
      id: source.id,
      expectedVersion: source.rowVersion,
      requestId,
      targetConsumer: 'rebuild',
      actor: 'ops',
      reason: 'rebuild',
    });
  }

  it('a delivery whose message id is replay:<request id> does not turn the replay into "payload was purged"', async () => {
    const tenantId = `t-${randomUUID()}`;
    const source = await completed(tenantId);
    const requestId = randomUUID();
    // A delivery (e.g. forged by a producer of the rebuild queue) takes the replay's identity.
    await inbox.accept(message({ consumer: 'rebuild', tenantId, messageId: `replay:${requestId}` }));
    const attempt = replayInRebuild(tenantId, source, requestId);
    const outcome = await attempt.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error: error as Error }),
    );
    // The source is COMPLETED at the observed version with its payload retained: whatever the
    // answer, it must not tell the operator that the payload was purged (it was not).
    expect((await receiptRow(t, source.id)).payload).not.toBeNull();
    if (!outcome.ok) expect(outcome.error.message).not.toMatch(/purged/);
    expect(outcome.ok && outcome.value.kind).toBe('accepted');
  });

  it("refuses a delivered message id in ferry's own namespace (ferry:), which replays use", async () => {
    const tenantId = `t-${randomUUID()}`;
    for (const messageId of [`ferry:replay:${randomUUID()}`, 'ferry:anything']) {
      await expect(inbox.accept(message({ consumer: 'rebuild', tenantId, messageId }))).rejects.toMatchObject(
        {
          code: 'FERRY_VALIDATION_FAILED',
        },
      );
    }
    // Every transport dead-letters such a delivery before acceptance, by the same rule.
    expect(messageIdFault('ferry:replay:x')).toMatch(/must not begin with 'ferry:'/);
    expect(messageIdFault('replay:x')).toBeNull();
    const source = await completed(tenantId);
    const requestId = randomUUID();
    const replayed = await replayInRebuild(tenantId, source, requestId);
    expect(replayed.record.messageId).toBe(`ferry:replay:${requestId}`);
  });

  it('names the receipt that holds the replay id (stored before the prefix was reserved), not a purge', async () => {
    const tenantId = `t-${randomUUID()}`;
    const source = await completed(tenantId);
    const requestId = randomUUID();
    const { record } = await inbox.accept(message({ consumer: 'rebuild', tenantId }));
    await t.db.execute('UPDATE ferry_inbox_receipts SET message_id = $2 WHERE id = $1::uuid', [
      record.id,
      `ferry:replay:${requestId}`,
    ]);
    const attempt = replayInRebuild(tenantId, source, requestId);
    await expect(attempt).rejects.toMatchObject({ code: 'FERRY_STATE_CONFLICT' });
    await expect(attempt).rejects.toThrow(new RegExp(`taken by receipt ${record.id}`));
  });
});
