import { isFerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox } from './helpers';

const message = (consumer: string, messageId: string) => ({
  consumer,
  messageId,
  tenantId: 't1',
  payload: { n: 1 },
});

describe('a consumer name without a handler', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('is reported invalid with FERRY_HANDLER_MISSING and stores nothing, while its neighbours are accepted', async () => {
    const inbox = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
    const results = await inbox.acceptMany([message('orderz', 'a'), message('orders', 'b')]);
    expect(results).toEqual([
      expect.objectContaining({ kind: 'invalid', code: 'FERRY_HANDLER_MISSING' }),
      expect.objectContaining({ kind: 'accepted' }),
    ]);
    const rows = await t.db.query<{ consumer: string }>('SELECT consumer FROM ferry_inbox_receipts');
    expect(rows.map((r) => r.consumer)).toEqual(['orders']);
    const error = await inbox.accept(message('orderz', 'c')).catch((e: unknown) => e);
    expect(isFerryError(error, 'FERRY_HANDLER_MISSING')).toBe(true);
    expect(() => inbox.assertHandles('orderz')).toThrow(
      expect.objectContaining({ code: 'FERRY_HANDLER_MISSING' }),
    );
  });

  it('is accepted by an acceptance-only inbox (no handlers at all), whose workers run elsewhere', async () => {
    const inbox = makeInbox(t.prisma);
    expect(await inbox.acceptMany([message('anything', 'd')])).toEqual([
      expect.objectContaining({ kind: 'accepted' }),
    ]);
    expect(() => inbox.assertHandles('anything')).not.toThrow();
  });
});
