/**
 * Review 123: a replay retried as the same request (same request id, source, version, target
 * consumer and reason) by another actor was refused as a conflict ("already used with other
 * arguments (actor)").
 *
 * Contract: spec 002 "Generate and persist one UUID for each intended operator request, then reuse
 * it after timeouts ... retrying the same request returns its existing replay receipt". The actor
 * says who asks, not what is asked: the retry of an interrupted `ferry inbox replay` from a second
 * shell or host (whose default actor is `cli:<user>@<host>`), or by the colleague who took over the
 * incident, is the same request. Refused, the operator reads that the request id was misused and
 * may mint a new one: a second replay, another business execution.
 *
 * Each call is audited under its own actor, so the retry is still traced to whoever made it, and
 * the replay's lineage keeps the actor of the request that created it.
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

/** A replay request of the fixture's COMPLETED receipt of tenant acme. */
async function request(actor: string) {
  const f = await database.fixture();
  const tenant = new InboxAdmin(database.t().prisma).forTenant('acme');
  const input = {
    id: f.tenant.completed.id,
    expectedVersion: f.tenant.completed.expectedVersion,
    requestId: randomUUID(),
    targetConsumer: 'work',
    reason: 'projection rebuild',
    actor,
  };
  return { tenant, input };
}

it('the same replay request retried by another actor is a duplicate, audited under that actor', async () => {
  const { tenant, input } = await request('cli:ops@host-a');
  const first = await tenant.replay(input);
  expect(first.kind).toBe('accepted');
  const again = await tenant.replay({ ...input, actor: 'cli:ops@host-b' }).catch((error: unknown) => error);
  expect(again).toEqual({ kind: 'duplicate', record: first.record });
  expect(first.record.replay?.actor).toBe('cli:ops@host-a');
  const audit = await database.t().db.query<{ actor: string; outcome: string }>(
    `SELECT actor, outcome FROM ferry_operator_audit
       WHERE action = 'inbox.replay' AND arguments->>'requestId' = $1 ORDER BY id`,
    [input.requestId],
  );
  expect(audit).toEqual([
    { actor: 'cli:ops@host-a', outcome: 'applied' },
    { actor: 'cli:ops@host-b', outcome: 'none' },
  ]);
});

it('a request id reused with another target or reason is still a conflict', async () => {
  const { tenant, input } = await request('ops');
  await tenant.replay(input);
  await expect(tenant.replay({ ...input, actor: 'other', reason: 'else' })).rejects.toMatchObject({
    code: 'FERRY_REPLAY_CONFLICT',
    details: { differing: ['reason'] },
  });
});
