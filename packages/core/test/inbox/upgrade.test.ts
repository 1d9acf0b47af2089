import { FERRY_HEADERS, migrate } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, receiptRow } from './helpers';

/**
 * An application upgraded before its database: ferry's newest inbox migration
 * (0009_inbox_messaging_system, the column `messaging_system`) is not applied yet.
 */
describe('inbox on a database not yet migrated to the running ferry', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.execute('ALTER TABLE ferry_inbox_receipts DROP COLUMN messaging_system');
    await t.db.execute("DELETE FROM ferry_schema_migrations WHERE name = '0009_inbox_messaging_system'");
  });
  afterAll(async () => {
    await t.drop();
  });

  it('initialize() names the missing column', async () => {
    const inbox = makeInbox(t.prisma);
    await expect(inbox.initialize()).rejects.toMatchObject({
      code: 'FERRY_SCHEMA_NOT_READY',
      details: { missing: ['column:ferry_inbox_receipts.messaging_system'] },
    });
  });

  it('a transport holds its deliveries (never dead-letters them) until the migration runs, then accepts them', async () => {
    const inbox = makeInbox(t.prisma);
    const broker = new InMemoryBroker();
    broker.declareQueue('orders');
    const events: TransportConsumerEvent[] = [];
    const ids = ['upgrade-1', 'upgrade-2', 'upgrade-3'];
    for (const id of ids) {
      broker.send('orders', {
        body: Buffer.from(JSON.stringify({ id })),
        headers: { [FERRY_HEADERS.messageId]: id, [FERRY_HEADERS.tenantId]: 'acme' },
      });
    }
    const consumer = attachInMemoryConsumer(inbox, {
      broker,
      queue: 'orders',
      consumer: 'orders',
      observer: (event) => void events.push(event),
      retryBackoff: { initialMs: 20, maxMs: 50 },
    });
    try {
      await consumer.ready();
      await waitUntil(
        'acceptance reported unavailable or a dead letter',
        () =>
          events.some((e) => e.type === 'acceptance-unavailable' || e.type === 'dead-lettered') || undefined,
        { timeoutMs: 15_000, intervalMs: 20 },
      );
      expect(broker.deadLetters('orders')).toEqual([]);
      expect(events.find((e) => e.type === 'acceptance-unavailable')).toMatchObject({
        error: expect.stringContaining('messaging_system'),
      });

      await migrate(t.db);
      await waitUntil(
        'every delivery accepted',
        () => events.some((e) => e.type === 'acceptance-recovered') || undefined,
        { timeoutMs: 15_000, intervalMs: 20 },
      );
      const stored = await t.db.query<{ id: string; message_id: string }>(
        'SELECT id, message_id FROM ferry_inbox_receipts ORDER BY message_id',
      );
      expect(stored.map((r) => r.message_id)).toEqual(ids);
      expect((await receiptRow(t, stored[0]!.id)).messaging_system).toBe('memory');
      expect(broker.deadLetters('orders')).toEqual([]);
    } finally {
      await consumer.close();
    }
  });
});
