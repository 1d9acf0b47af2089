import { emitMany } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { drainAll, relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('throughput', () => {
  it('10,000 events emitted and relayed through the in-memory publisher are each SENT exactly once', async () => {
    const total = 10_000;
    const started = performance.now();
    for (let offset = 0; offset < total; offset += 500) {
      const events = Array.from({ length: 500 }, (_, i) => ({ type: 'bulk', payload: { n: offset + i } }));
      await t.prisma.$transaction((tx) => emitMany(tx, events));
    }
    const emitted = performance.now();
    const publisher = new InMemoryPublisher();
    await drainAll(relay(t.db, publisher, { batchSize: 500 }), t.db, 120_000);
    const relayed = performance.now();
    const counts = publisher.deliveryCounts();
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
    );
    console.log(
      `throughput: ${row?.n} SENT, ${counts.size} distinct delivered; emit ${Math.round(emitted - started)} ms, ` +
        `relay ${Math.round(relayed - emitted)} ms, total ${Math.round(relayed - started)} ms`,
    );
    expect(row?.n).toBe(total);
    expect(counts.size).toBe(total);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });
});
