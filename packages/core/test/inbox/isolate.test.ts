import { type InboxAcceptInput } from '@ferry/core';
import { acceptIsolated } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

describe('acceptIsolated with the real inbox', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('commits every valid neighbour exactly once and reports the input that fails alone', async () => {
    const inbox = makeInbox(t.prisma);
    const first = message();
    await inbox.accept(first);
    const poisoned = message({ payload: { poison: true } });
    const batch: InboxAcceptInput[] = [
      message(),
      first,
      poisoned,
      { ...first, payload: { other: 'body' } },
      message(),
      message({ tenantId: null }),
      message(),
    ];
    // The acceptor throws (not batch-wide) for any call holding the poisoned input, as the
    // driver does for a row PostgreSQL refuses.
    const results = await acceptIsolated(batch, (inputs) =>
      inputs.includes(poisoned) ? Promise.reject(new Error('row refused')) : inbox.acceptMany(inputs),
    );
    expect(results.map((r) => r.kind)).toEqual([
      'accepted',
      'duplicate',
      'invalid',
      'conflict',
      'accepted',
      'invalid',
      'accepted',
    ]);
    expect(results[2]).toEqual({
      kind: 'invalid',
      code: 'acceptance_failed',
      reason: 'row refused',
      rejectReason: 'acceptance_failed',
    });
    const rows = await t.db.query<{ message_id: string; n: number }>(
      'SELECT message_id, count(*)::int AS n FROM ferry_inbox_receipts GROUP BY message_id',
    );
    const stored = new Map(rows.map((r) => [r.message_id, r.n]));
    for (const i of [0, 1, 4, 6]) expect(stored.get(batch[i]!.messageId)).toBe(1);
    expect(stored.has(poisoned.messageId)).toBe(false);
    expect(stored.has(batch[5]!.messageId)).toBe(false);
  });
});
