/**
 * Review 35: the audit trail's `id` filter misses actions whose id was given in another letter
 * case.
 *
 * The admins take a record id in any case (a UUID; retry, markFailed, requeue and replay all act
 * on the record), but the audit row stores the ids as the caller wrote them (adminActions.ts
 * perId / scoped.ts `ids: [id]`), and createAuditLog().list({ id }) compares text exactly
 * (`$6::text = ANY(a.ids)`). An operator who retried `0D76…` (upper case, as many tools print
 * UUIDs) and then asks the trail about the record as ferry itself prints it (`get()`, `list()`,
 * lower case) is told nothing was done to it; so is one asking in upper case about an action ferry
 * recorded in lower case (release: ids from PostgreSQL).
 *
 * Contract: docs/outbox.md Admin "`createAuditLog(db).list({ …, id?, … })`"; audit/log.ts
 * AuditQuery.id "Only actions that named this record id". The retry dedupe already treats ids
 * case-insensitively ("An id given more than once (in any case) is retried, answered and audited
 * once").
 *
 * Why it matters: the audit trail is where an operator looks after FERRY_OUTCOME_UNKNOWN ("list
 * the records, or the audit trail, before acting again"): a missed retry is retried again.
 *
 * Fix direction: store ids canonical (lower case) in the audit row and lower-case the `id` filter
 * (when it is a UUID).
 */
import { createAuditLog, createOutboxAdmin, InboxAdmin } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

it('an outbox retry given the id in upper case is found by the id as ferry prints it', async () => {
  const f = await database.fixture();
  const db = database.t().db;
  expect(await createOutboxAdmin(db).retry(f.failed.toUpperCase())).toMatchObject({ outcome: 'applied' });
  const { items } = await createAuditLog(db).list({ id: f.failed });
  // On HEAD: [] (the row holds the upper-case id).
  expect(items.map((entry) => entry.action)).toEqual(['outbox.retry']);
});

it('an inbox requeue given the id in upper case is found by the id as ferry prints it', async () => {
  const f = await database.fixture();
  const t = database.t();
  const { id, expectedVersion } = f.tenant.dead;
  await new InboxAdmin(t.prisma)
    .forTenant('acme')
    .requeue({ id: id.toUpperCase(), expectedVersion, reason: 'handler fixed', actor: 'ops' });
  const { items } = await createAuditLog(t.db).list({ id });
  expect(items.map((entry) => entry.action)).toEqual(['inbox.requeue']);
});

it('a release (ids recorded by PostgreSQL, lower case) is found by the id in upper case', async () => {
  const f = await database.fixture();
  const db = database.t().db;
  const { released } = await createOutboxAdmin(db).release({ claimToken: f.claimToken });
  expect(released).toHaveLength(1);
  const { items } = await createAuditLog(db).list({ id: released[0]!.toUpperCase() });
  expect(items.map((entry) => entry.action)).toEqual(['outbox.release']);
});
