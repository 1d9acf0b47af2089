import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

describe('inbox acceptMany under concurrency', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('never deadlocks when concurrent batches share identities in different orders', async () => {
    const inboxes = [makeInbox(t.prisma), makeInbox(t.newClient()), makeInbox(t.newClient())];
    for (let round = 0; round < 15; round += 1) {
      const inputs = Array.from({ length: 60 }, (_, i) =>
        message({ tenantId: `t${i % 3}`, consumer: `c${i % 2}` }),
      );
      const orders = [
        inputs,
        [...inputs].reverse(),
        inputs.filter((_, i) => i % 2).concat(inputs.filter((_, i) => !(i % 2))),
      ];
      const settled = await Promise.allSettled(orders.map((batch, i) => inboxes[i]!.acceptMany(batch)));
      const failures = settled.flatMap((s) =>
        s.status === 'rejected' ? [String((s.reason as Error & { cause?: Error }).cause?.message)] : [],
      );
      expect(failures).toEqual([]);
      const results = settled.flatMap((s) => (s.status === 'fulfilled' ? [...s.value] : []));
      expect(results.filter((r) => r.kind === 'accepted')).toHaveLength(inputs.length);
      expect(results.filter((r) => r.kind === 'duplicate')).toHaveLength(2 * inputs.length);
    }
  });
});
