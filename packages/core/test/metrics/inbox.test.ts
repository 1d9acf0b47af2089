/**
 * The inbox metrics fed by a real inbox and worker on PostgreSQL: the scraped counters agree with
 * the receipts in the table, and no label carries a receipt or message id.
 */
import { combineObservers, InboxPermanentError, type InboxEvent } from '@ferry/core';
import { createFerryMetrics, serveMetrics } from '@ferry/core/metrics';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { scrape } from '../../../../test-support/prometheusText';
import { makeInbox, message, waitFor } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('counts acceptances, attempts, DEAD and handler durations as the receipts in the table show them', async () => {
  const metrics = createFerryMetrics({ stats: { db: t.db, cacheMs: 0 } });
  const own: InboxEvent[] = [];
  const failedOnce = new Set<string>();
  const inbox = makeInbox(t.prisma, {
    observer: combineObservers(metrics.inbox, (event: InboxEvent) => void own.push(event)),
    worker: { enabled: true },
    handlers: {
      orders: async () => {},
      flaky: async (_payload, { messageId }) => {
        if (failedOnce.has(messageId)) return;
        failedOnce.add(messageId);
        throw new Error('first attempt fails');
      },
      broken: async () => {
        throw new InboxPermanentError('never works');
      },
    },
  });
  const inputs = [
    ...Array.from({ length: 4 }, () => message({ consumer: 'orders' })),
    ...Array.from({ length: 2 }, () => message({ consumer: 'flaky' })),
    message({ consumer: 'broken' }),
  ];
  for (const input of inputs) await inbox.accept(input);
  await inbox.accept(inputs[0]!); // duplicate
  await expect(inbox.accept({ ...inputs[1]!, payload: { other: true } })).rejects.toMatchObject({
    code: 'FERRY_FINGERPRINT_CONFLICT',
  });
  await inbox.initialize();
  await waitFor('every receipt finished', async () => {
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status IN ('COMPLETED', 'DEAD')`,
    );
    return row?.n === inputs.length;
  });
  await waitFor(
    'the last observer event',
    async () => own.filter((e) => e.type === 'completed' || e.type === 'dead').length === 7,
  );

  const server = await serveMetrics({ registry: metrics.registry, port: 0 });
  try {
    const s = await scrape(server.url);
    const acceptances = (consumer: string, outcome: string) =>
      s.value('ferry_inbox_acceptances_total', { consumer, outcome });
    expect([
      acceptances('orders', 'accepted'),
      acceptances('orders', 'duplicate'),
      acceptances('orders', 'conflict'),
    ]).toEqual([4, 1, 1]);
    const attempts = (consumer: string, outcome: string) =>
      s.value('ferry_inbox_attempts_total', { consumer, outcome });
    expect([
      attempts('orders', 'completed'),
      attempts('flaky', 'retry'),
      attempts('flaky', 'completed'),
    ]).toEqual([4, 2, 2]);
    expect(attempts('broken', 'dead')).toBe(1);
    expect(s.value('ferry_inbox_dead_total', { consumer: 'broken', reason: 'permanent' })).toBe(1);
    expect(s.value('ferry_inbox_handler_duration_seconds_count', { consumer: 'orders' })).toBe(4);
    expect(s.value('ferry_inbox_receipts', { consumer: 'orders', status: 'COMPLETED' })).toBe(4);
    expect(s.value('ferry_inbox_receipts', { consumer: 'broken', status: 'DEAD' })).toBe(1);
    expect(s.value('ferry_inbox_oldest_unfinished_age_seconds', { consumer: 'orders' })).toBe(0);
    // The combined observer saw the same events.
    expect(own.filter((e) => e.type === 'accepted')).toHaveLength(inputs.length);

    const rows = await t.db.query<{ id: string; message_id: string }>(
      'SELECT id::text, message_id FROM ferry_inbox_receipts',
    );
    const ids = new Set(rows.flatMap((row) => [row.id, row.message_id]));
    const labelValues = s.samples.flatMap((sample) => Object.values(sample.labels));
    expect(labelValues.filter((value) => ids.has(value))).toEqual([]);
  } finally {
    await server.close();
  }
});
