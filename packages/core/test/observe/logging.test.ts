import { randomUUID } from 'node:crypto';
import { createRelay, emitMany, Inbox, InboxPermanentError, type Logger } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A logger that is not pino: four methods, as the Logger contract asks. */
function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: object | string, message?: string): void => {
      if (typeof fields === 'string') lines.push({ level, fields: {}, message: fields });
      else lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('warn lines for FAILED and DEAD', () => {
  it('the relay logs an event that goes FAILED at warn with its id, type and reason', async () => {
    const logger = recordingLogger();
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: {} }]);
    const publisher = new InMemoryPublisher({ decide: () => ({ permanent: 'schema rejected' }) });
    const relay = createRelay({ db: t.db, publisher, logger });
    await relay.runOnce();
    await relay.close();
    expect(logger.lines).toContainEqual({
      level: 'warn',
      fields: expect.objectContaining({
        id: ids[0],
        type: 'order.placed',
        reason: 'permanent',
        error: 'schema rejected',
      }),
      message: 'outbox event FAILED',
    });
  });

  it('the inbox worker logs a receipt that goes DEAD at warn with its id, consumer and reason', async () => {
    const logger = recordingLogger();
    const inbox = new Inbox(t.prisma, {
      logger,
      handlers: {
        work: async () => {
          throw new InboxPermanentError('card declined');
        },
      },
    });
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'a',
      payload: {},
    });
    await inbox.runOnce();
    await inbox.close();
    expect(logger.lines).toContainEqual({
      level: 'warn',
      fields: expect.objectContaining({ receiptId: record.id, consumer: 'work', reason: 'permanent' }),
      message: 'inbox receipt DEAD',
    });
  });
});
