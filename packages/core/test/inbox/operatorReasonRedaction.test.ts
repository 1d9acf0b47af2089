// Review finding (failed first): the inbox's requeue and replay stored the operator's reason as
// given (requeue history, replay lineage, audit), while the outbox's markFailed redacts it with
// the built-in rules: an operator pasting a broker error leaked its credentials into the tables.
import { randomUUID } from 'node:crypto';
import { InboxAdmin, InboxPermanentError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow } from './helpers';

const REASON = 'broker amqp://app:s3cret@broker keeps refusing; password is hunter2';
const REDACTED = 'broker amqp://[redacted]@broker keeps refusing; password is [redacted]';

describe("an inbox operator's reason", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  async function auditedReasons(action: string, id: string): Promise<string[]> {
    const rows = await t.db.query<{ reason: string }>(
      `SELECT reason FROM ferry_operator_audit WHERE action = $1 AND $2::text = ANY (ids)`,
      [action, id],
    );
    return rows.map((r) => r.reason);
  }

  it('is redacted with the built-in rules by requeue and replay, stored and audited', async () => {
    const tenantId = `t-${randomUUID()}`;
    const inbox = makeInbox(t.prisma, {
      handlers: {
        fails: async () => {
          throw new InboxPermanentError('no');
        },
        works: async () => undefined,
      },
    });
    const dead = (await inbox.accept(message({ tenantId, consumer: 'fails' }))).record;
    const done = (await inbox.accept(message({ tenantId, consumer: 'works' }))).record;
    for (let i = 0; i < 20 && (await receiptRow(t, done.id)).status !== 'COMPLETED'; i += 1)
      await inbox.runOnce();
    for (let i = 0; i < 20 && (await receiptRow(t, dead.id)).status !== 'DEAD'; i += 1) await inbox.runOnce();
    const admin = new InboxAdmin(t.prisma).forTenant(tenantId);

    const deadNow = (await admin.get(dead.id))!;
    const requeued = await admin.requeue({
      id: dead.id,
      expectedVersion: deadNow.rowVersion,
      actor: 'ops',
      reason: REASON,
    });
    expect(requeued.requeueHistory.map((h) => h.reason)).toEqual([REDACTED]);
    expect(await auditedReasons('inbox.requeue', dead.id)).toEqual([REDACTED]);

    const doneNow = (await admin.get(done.id))!;
    const replay = await admin.replay({
      id: done.id,
      expectedVersion: doneNow.rowVersion,
      requestId: randomUUID(),
      targetConsumer: 'works',
      actor: 'ops',
      reason: REASON,
    });
    expect(replay.record.replay?.reason).toBe(REDACTED);
    expect(await auditedReasons('inbox.replay', done.id)).toEqual([REDACTED]);
  });
});
