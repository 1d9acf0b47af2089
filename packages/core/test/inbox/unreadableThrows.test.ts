/**
 * A handler throws a value that cannot be read (an Error whose message getter throws, a Proxy
 * whose traps throw, a null-prototype object). The receipt must end retried or DEAD with a
 * stored text, and the worker must go on: never lost, never stuck in PROCESSING (found by
 * review2; the Proxy's getPrototypeOf trap threw out of deadReason's instanceof).
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

function throwingMessage(): Error {
  const error = new Error('x');
  Object.defineProperty(error, 'message', {
    get() {
      throw new TypeError('message unreadable');
    },
  });
  return error;
}

const hostile: [string, () => unknown][] = [
  ['an Error whose message getter throws', throwingMessage],
  [
    'a Proxy whose every trap throws',
    () =>
      new Proxy(new Error('x'), {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          throw new Error('trap');
        },
        has() {
          throw new Error('trap');
        },
      }),
  ],
  ['a null-prototype object', () => Object.create(null) as unknown],
];

describe('a handler throws a value that cannot be read', () => {
  it.each(hostile)('%s: the receipt is not lost and the worker goes on', async (_name, make) => {
    let calls = 0;
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: async () => {
          calls += 1;
          if (calls === 1) throw make();
        },
      },
    });
    const input = message();
    await inbox.accept(input);
    await inbox.runOnce().catch(() => undefined);
    const [row] = await t.db.query<{ status: string; last_error: string | null }>(
      'SELECT status, last_error FROM ferry_inbox_receipts WHERE message_id = $1',
      [input.messageId],
    );
    expect(row?.status).not.toBe('PROCESSING');
    expect(row?.last_error).toEqual(expect.any(String));
    // The worker goes on: the retry completes it.
    for (let i = 0; i < 5 && calls < 2; i += 1) await inbox.runOnce();
    await inbox.close();
    const [after] = await t.db.query<{ status: string }>(
      'SELECT status FROM ferry_inbox_receipts WHERE message_id = $1',
      [input.messageId],
    );
    expect(after?.status).toBe('COMPLETED');
  });
});

describe("a handler's parse throws a value that cannot be read", () => {
  it.each(hostile)('%s: an invalid payload, DEAD at once, handle() not run', async (_name, make) => {
    let handled = 0;
    const inbox = makeInbox(t.prisma, {
      handlers: {
        orders: {
          parse: () => {
            throw make();
          },
          handle: async () => void (handled += 1),
        },
      },
    });
    const input = message();
    await inbox.accept(input);
    await inbox.runOnce();
    const [row] = await t.db.query<{ status: string; last_error: string | null }>(
      'SELECT status, last_error FROM ferry_inbox_receipts WHERE message_id = $1',
      [input.messageId],
    );
    expect({ status: row?.status, error: row?.last_error, handled }).toEqual({
      status: 'DEAD',
      error: expect.stringMatching(/^InboxInvalidPayloadError|^FerryError|\[FERRY_INVALID_PAYLOAD\]/),
      handled: 0,
    });
  });
});
