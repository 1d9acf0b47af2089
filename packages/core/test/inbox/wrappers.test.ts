import { fromPrisma, type InboxHandlerContextWrapper } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow, recorder } from './helpers';

describe('handlerContext wrappers', () => {
  let consumerSeq = 0;
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  async function runWith(wrapper: InboxHandlerContextWrapper, handlerFails = false) {
    const { events, observer } = recorder();
    let calls = 0;
    consumerSeq += 1;
    const consumer = `w${consumerSeq}`;
    const inbox = makeInbox(t.prisma, {
      observer,
      handlerContext: wrapper,
      handlers: {
        [consumer]: async (_p, context) => {
          calls += 1;
          await fromPrisma(context.tx).execute('INSERT INTO business_rows (receipt_id) VALUES ($1::uuid)', [
            context.receiptId,
          ]);
          if (handlerFails) throw new Error('handler failed');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer }));
    await inbox.runOnce();
    return {
      row: await receiptRow(t, record.id),
      calls,
      events,
      business: await businessCount(t, record.id),
    };
  }

  it('completes when the wrapper awaits next() exactly once', async () => {
    const order: string[] = [];
    const result = await runWith(async (_c, next) => {
      order.push('before');
      await next();
      order.push('after');
    });
    expect(result.row.status).toBe('COMPLETED');
    expect(order).toEqual(['before', 'after']);
  });

  it.each<[string, InboxHandlerContextWrapper, boolean, number]>([
    ['skips next()', async () => undefined, false, 0],
    [
      'calls next() twice',
      async (_c, next) => {
        await next();
        await next();
      },
      false,
      1,
    ],
    [
      'does not await next()',
      async (_c, next) => {
        void next().catch(() => undefined);
      },
      false,
      1,
    ],
    [
      'swallows a handler failure',
      async (_c, next) => {
        await next().catch(() => undefined);
      },
      true,
      1,
    ],
  ])('never completes when a wrapper %s', async (_name, wrapper, handlerFails, expectedCalls) => {
    const result = await runWith(wrapper, handlerFails);
    expect(result.row.status).toBe('RETRYABLE');
    expect(result.row.last_error).toContain('FERRY_WRAPPER_MISUSE');
    expect(result.calls).toBe(expectedCalls);
    expect(result.business).toBe(0);
    expect(result.events.some((e) => e.type === 'completed')).toBe(false);
  });
});
