/**
 * The running relay pipelines its cycles: while one claimed batch is being published, the next
 * claim goes out (up to pipelineDepth batches in flight), and batches in flight never share an
 * ordering key.
 */
import { emitMany, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('TRUNCATE outbox_events');
});

/** Holds every publish until `release()`; records the batches in flight together. */
class GatedPublisher implements Publisher {
  readonly inFlight = new Set<readonly OutboxMessage[]>();
  maxInFlight = 0;
  /** Ordering keys seen in two batches in flight at the same time. */
  readonly sharedKeys: string[] = [];
  private gate: Promise<void>;
  private open: () => void = () => undefined;

  constructor() {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open();
  }

  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    const keys = new Set(messages.flatMap((m) => (m.orderingKey ? [m.orderingKey] : [])));
    for (const other of this.inFlight)
      for (const m of other)
        if (m.orderingKey && keys.has(m.orderingKey)) this.sharedKeys.push(m.orderingKey);
    this.inFlight.add(messages);
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight.size);
    await this.gate;
    this.inFlight.delete(messages);
    return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
  }
}

async function sentCount(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
  );
  return row?.n ?? 0;
}

describe('pipelined relay', () => {
  it('claims and publishes the next batch while the first is still being published', async () => {
    await t.prisma.$transaction((tx) =>
      emitMany(
        tx,
        Array.from({ length: 30 }, (_, i) => ({ type: 'piped', payload: { i } })),
      ),
    );
    const publisher = new GatedPublisher();
    const r = relay(t.db, publisher, { batchSize: 10, pipelineDepth: 2, pollInterval: 50 });
    r.start();
    try {
      await waitFor(() => publisher.inFlight.size === 2);
      publisher.release();
      await waitFor(async () => (await sentCount()) === 30);
    } finally {
      await r.close();
    }
    expect(publisher.maxInFlight).toBe(2);
  });

  it('keeps at most one event per ordering key in flight across pipelined batches', async () => {
    const keys = ['a', 'b', 'c', 'd'];
    await t.prisma.$transaction((tx) =>
      emitMany(
        tx,
        Array.from({ length: 40 }, (_, i) => ({ type: 'keyed', payload: { i }, orderingKey: keys[i % 4] })),
      ),
    );
    const publisher = new GatedPublisher();
    const r = relay(t.db, publisher, { batchSize: 2, pipelineDepth: 4, pollInterval: 20 });
    r.start();
    try {
      // Two batches hold the heads of all four keys; a third claim finds nothing until they complete.
      await waitFor(() => publisher.inFlight.size === 2 && r.cycles >= 3);
      publisher.release();
      await waitFor(async () => (await sentCount()) === 40);
    } finally {
      await r.close();
    }
    expect(publisher.sharedKeys).toEqual([]);
  });

  it('after a short claim that took rows it claims again instead of waiting for the next poll', async () => {
    // One key: every claim takes only its head (the rest waits for it), so every claim is short.
    await t.prisma.$transaction((tx) =>
      emitMany(
        tx,
        Array.from({ length: 5 }, (_, i) => ({ type: 'one-key', payload: { i }, orderingKey: 'k' })),
      ),
    );
    const publisher = new GatedPublisher();
    publisher.release();
    const r = relay(t.db, publisher, { batchSize: 10, pollInterval: 600_000 });
    r.start();
    try {
      await waitFor(async () => (await sentCount()) === 5);
    } finally {
      await r.close();
    }
  });
});
