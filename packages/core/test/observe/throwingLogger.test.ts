/**
 * The logger is the application's: a pino on a destination that broke, a hand-written adapter
 * with a bug. A logger that throws must cost its lines, never ferry's work: a receipt still goes
 * DEAD, an event still FAILED and SENT, and no promise of ferry's rejects for it (an unhandled
 * rejection ends a Node process).
 */
import {
  createRelay,
  emitMany,
  InboxPermanentError,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { failOnUnhandledRejections } from '../../../../test-support/lifecycle';
import { throwingLogger } from '../../../../test-support/throwingLogger';
import { makeInbox, waitFor } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

failOnUnhandledRejections();

test('inbox: with a logger that throws, a permanent failure still goes DEAD, a throwing observer is still contained, and nothing rejects', async () => {
  const { logger, calls } = throwingLogger();
  const inbox = makeInbox(t.prisma, {
    logger,
    observer: () => {
      throw new Error('observer bug');
    },
    handlers: {
      refuses: async () => {
        throw new InboxPermanentError('never');
      },
      fine: async () => undefined,
    },
  });
  await inbox.initialize();
  await inbox.accept({ consumer: 'refuses', messageId: 'm-dead', tenantId: 't1', payload: { n: 1 } });
  await inbox.accept({ consumer: 'fine', messageId: 'm-fine', tenantId: 't1', payload: { n: 2 } });

  inbox.start();
  await waitFor('both receipts settled', async () => {
    const rows = await t.db.query<{ status: string }>(
      `SELECT status FROM ferry_inbox_receipts WHERE message_id IN ('m-dead', 'm-fine') ORDER BY message_id`,
    );
    return rows.map((row) => row.status).join() === 'DEAD,COMPLETED' ? true : undefined;
  });
  await inbox.close();
  // Give rejections a turn to surface.
  await new Promise((resolve) => setImmediate(resolve));

  expect(calls()).toBeGreaterThan(0);
});

class RefusingPublisher implements Publisher {
  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    return messages.map((message) =>
      (message.payload as { ok: boolean }).ok
        ? { id: message.id, status: 'sent' }
        : { id: message.id, status: 'permanent', error: 'no such route' },
    );
  }
}

test('relay: with a logger that throws, a FAILED transition and its neighbours complete, and nothing rejects', async () => {
  const { logger, calls } = throwingLogger();
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { ok: false } },
    { type: 'b', payload: { ok: true } },
  ]);
  const relay = createRelay({
    db: t.db,
    publisher: new RefusingPublisher(),
    logger,
    observer: () => {
      throw new Error('observer bug');
    },
  });

  const result = await relay.runOnce();
  await relay.close();
  await new Promise((resolve) => setImmediate(resolve));

  const rows = await t.db.query<{ id: string; status: string }>(
    `SELECT id::text AS id, status FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  const byId = new Map(rows.map((row) => [row.id, row.status]));
  expect([result.sent, result.failed, ids.map((id) => byId.get(id))]).toEqual([1, 1, ['FAILED', 'SENT']]);
  expect(calls()).toBeGreaterThan(0);
});
