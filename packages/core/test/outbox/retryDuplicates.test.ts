// Review finding (failed first): `ferry outbox retry` given the same id twice reported it applied
// twice (one transition, two 'applied' results and an audit row naming the id twice).
import { randomUUID } from 'node:crypto';
import { createAuditLog, createOutboxAdmin, emitMany } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function failedEvent(): Promise<string> {
  const { ids } = await emitMany(t.db, [{ type: 'retry.twice', payload: {} }]);
  const id = ids[0]!;
  const token = randomUUID();
  await t.db.execute(
    `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
       lease_expires_at = now() + interval '1 minute', claim_count = claim_count + 1 WHERE id = $1::uuid`,
    [id, token],
  );
  await relayStore(t.db).complete(token, [{ id, kind: 'permanent', error: 'boom', delayMs: 0 }]);
  return id;
}

describe('outbox retryMany with an id given more than once', () => {
  it('answers and audits each id once, whatever its spelling', async () => {
    const [a, b] = [await failedEvent(), await failedEvent()];
    const actor = `ops-${randomUUID()}`;
    const results = await createOutboxAdmin(t.db).retryMany([a, b, a, a.toUpperCase()], {
      actor,
      reason: 'twice',
    });
    expect(results).toEqual([
      { id: a, outcome: 'applied' },
      { id: b, outcome: 'applied' },
    ]);
    const { items } = await createAuditLog(t.db).list({ actor });
    expect(items.map((e) => e.ids)).toEqual([[a, b]]);
  });
});
