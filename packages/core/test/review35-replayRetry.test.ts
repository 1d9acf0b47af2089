/**
 * Review 35: an inbox replay retried with exactly the same arguments is refused when the source
 * id was written in upper case.
 *
 * replay() stores the request as PostgreSQL prints it (replay_source_id: lower case) but compares a
 * repeated request against it with the id as the caller gave it (replay.ts `differing`:
 * `lineage.sourceId === request.sourceId`; the request id is lower-cased, the source id is not).
 * So the second call of the very same input, an upper-case UUID (as .NET, SQL Server and many
 * operator tools print them), throws InboxReplayConflictError ("was already used with other
 * arguments (id)") instead of answering `duplicate` with the existing replay receipt.
 *
 * Contract: spec 002 "Generate and persist one UUID for each intended operator request, then reuse
 * it after timeouts ... retrying the same request returns its existing replay receipt"; docs/inbox.md
 * (statementTimeoutMs): after FERRY_OUTCOME_UNKNOWN "a replay with its request id [is] absorbed if
 * repeated". The first call accepts an upper-case id (the same record), so the retry must too.
 *
 * Why it matters: the documented recovery after a timeout or a lost COMMIT answer (repeat the
 * request) fails with a conflict that tells the operator the request id was misused, so a tool
 * cannot tell a harmless retry from a real misuse, and may mint a new request id: a second replay,
 * another business execution.
 *
 * Fix direction: compare ids case-insensitively (lower-case `sourceId` in scoped.ts as
 * `requestId` already is).
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

it('the same replay request, its source id in upper case, is answered duplicate when repeated', async () => {
  const f = await database.fixture();
  const tenant = new InboxAdmin(database.t().prisma).forTenant('acme');
  const input = {
    id: f.tenant.completed.id.toUpperCase(),
    expectedVersion: f.tenant.completed.expectedVersion,
    requestId: randomUUID(),
    targetConsumer: 'work',
    reason: 'projection rebuild',
    actor: 'ops',
  };
  const first = await tenant.replay(input);
  expect(first.kind).toBe('accepted');
  // On HEAD: InboxReplayConflictError "replay request … was already used with other arguments (id)".
  const again = await tenant.replay(input).catch((error: unknown) => error);
  expect(again).toEqual({ kind: 'duplicate', record: first.record });
});

it('a repeated request naming the same source in another letter case is the same request', async () => {
  const f = await database.fixture();
  const tenant = new InboxAdmin(database.t().prisma).forTenant('acme');
  const input = {
    id: f.tenant.completed.id,
    expectedVersion: f.tenant.completed.expectedVersion,
    requestId: randomUUID(),
    targetConsumer: 'work',
    reason: 'projection rebuild',
    actor: 'ops',
  };
  const first = await tenant.replay(input);
  expect(first.kind).toBe('accepted');
  const again = await tenant
    .replay({ ...input, id: input.id.toUpperCase() })
    .catch((error: unknown) => error);
  expect(again).toEqual({ kind: 'duplicate', record: first.record });
});
