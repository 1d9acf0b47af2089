/**
 * Review 83: the core README (Options) promises that every options object is "checked once, up
 * front": a value of the wrong type fails with FerryConfigError at construction, "never as a
 * TypeError at start() or at the first message". A handler's `parse` is part of `handlers`
 * (docs/inbox.md: `{ parse(payload), handle(parsed, context) }`), but options.ts resolveHandlers
 * checks only `handle`: `parse: 'v2'` (a schema version put where the function belongs) or
 * `parse: {}` is accepted. At the first message process.ts invokeHandler calls it
 * (`if (handler.parse) parsed = handler.parse(payload)`), the TypeError "handler.parse is not a
 * function" is wrapped as InboxInvalidPayloadError, and every receipt of the consumer goes DEAD
 * at once as `invalid_payload`, blaming valid messages for a configuration mistake.
 */
import { createInbox, FerryConfigError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { message, quietLogger, receiptRow } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a handler whose parse is not a function is a configuration error, not a DEAD receipt', async () => {
  let built:
    | {
        accept: (input: ReturnType<typeof message>) => Promise<{ record: { id: string } }>;
        runOnce: () => Promise<unknown>;
        close: () => Promise<void>;
      }
    | undefined;
  let thrown: unknown;
  try {
    built = createInbox(t.prisma, {
      logger: quietLogger,
      handlers: { orders: { parse: 'v2' as never, handle: async () => undefined } },
    });
  } catch (error) {
    thrown = error;
  }
  let status: unknown = 'not accepted';
  if (built) {
    // What happens to a valid message meanwhile.
    const { record } = await built.accept(message());
    await built.runOnce();
    status = (await receiptRow(t, record.id)).status;
    await built.close();
  }
  // Received: constructed; the valid message is DEAD (invalid_payload: "handler.parse is not a function").
  expect({ configError: thrown instanceof FerryConfigError, status }).toEqual({
    configError: true,
    status: 'not accepted',
  });
  expect((thrown as FerryConfigError).option).toMatch(/^handlers\.orders/);
});
