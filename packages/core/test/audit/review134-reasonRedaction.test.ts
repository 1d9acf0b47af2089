/**
 * Review 134: every audited admin action records its reason redacted with the built-in rules, as
 * markFailed, requeue and replay already did (review finding in test/inbox/operatorReasonRedaction):
 * the reason of an outbox retry, release or purgeSent and of an inbox release or
 * purgeCompletedPayload was written to ferry_operator_audit as given, so a broker error an
 * operator pasted into `ferry outbox retry --reason` kept its password in the trail (and in
 * `ferry audit list`), where the same text given to `mark-failed` read `amqp://[redacted]@…`.
 * A failure's `error` row records it redacted too.
 */
import { createOutboxAdmin, emitMany, InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const REASON = 'broker amqp://app:s3cret@broker keeps refusing; password is hunter2';
const REDACTED = 'broker amqp://[redacted]@broker keeps refusing; password is [redacted]';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function reasons(): Promise<Array<{ action: string; outcome: string; reason: string }>> {
  return t.db.query(`SELECT action, outcome, reason FROM ferry_operator_audit ORDER BY id`);
}

describe("review 134: an operator's reason in the audit trail", () => {
  it('is redacted by every audited action, dry runs and failures included', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: {}, tenantId: 'acme' }]);
    const outbox = createOutboxAdmin(t.db);
    const inbox = new InboxAdmin(t.db).forTenant('acme');
    const audit = { actor: 'ops', reason: REASON };
    await outbox.retry(ids[0]!, audit);
    await outbox.retryMany(ids, { ...audit, dryRun: true });
    await outbox.release(audit);
    await outbox.purgeSent({ ...audit, before: new Date() });
    await inbox.release(audit);
    await inbox.purgeCompletedPayload({ ...audit, before: new Date() });
    // A refusal by PostgreSQL after the arguments were taken: audited as an error.
    await t.db.execute('ALTER TABLE outbox_events RENAME TO outbox_events_away');
    try {
      await expect(outbox.purgeSent({ ...audit, before: new Date() })).rejects.toThrow();
    } finally {
      await t.db.execute('ALTER TABLE outbox_events_away RENAME TO outbox_events');
    }
    expect(await reasons()).toEqual([
      { action: 'outbox.retry', outcome: 'none', reason: REDACTED },
      { action: 'outbox.retry', outcome: 'none', reason: REDACTED },
      { action: 'outbox.release', outcome: 'none', reason: REDACTED },
      { action: 'outbox.purge-sent', outcome: 'none', reason: REDACTED },
      { action: 'inbox.release', outcome: 'none', reason: REDACTED },
      { action: 'inbox.purge-payloads', outcome: 'none', reason: REDACTED },
      { action: 'outbox.purge-sent', outcome: 'error', reason: REDACTED },
    ]);
  });
});
