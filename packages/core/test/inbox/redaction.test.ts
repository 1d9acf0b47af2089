import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, receiptRow, recorder } from './helpers';

describe('inbox error redaction', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('keeps passwords, card and phone numbers out of last_error and observer events, except what the application allows', async () => {
    const { events, observer } = recorder();
    const inbox = makeInbox(t.prisma, {
      observer,
      redact: { allow: [/order 9\d{12}/] },
      handlers: {
        'c-leaky': async () => {
          throw Object.assign(
            new Error(
              'password is hunter2; card 4111 1111 1111 1111; call +1 555 123 4567; order 9000000000001',
            ),
            { code: 'E_PAYMENT' },
          );
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-leaky' }));
    expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
    const stored = String((await receiptRow(t, record.id)).last_error);
    const observed = JSON.stringify(events);
    for (const text of [stored, observed]) {
      expect(text).not.toMatch(/hunter2|4111|555 123 4567/);
      expect(text).toContain('Error [E_PAYMENT]: password is [redacted]');
      expect(text).toContain('order 9000000000001');
    }
  });

  it('rejects a malformed redact option at configuration', () => {
    expect(() => makeInbox(t.prisma, { redact: { allow: [42 as never] } })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'redact.allow' }),
    );
  });
});
