/**
 * Review 155: spec/002, "Error details are redacted before persistence and observation." An
 * error that names a sensitive key and quotes its value after a space (`Invalid token "…"`,
 * `invalid secret '…'`, `password “…” rejected`) showed the value in last_error and in the
 * observer's events, though `token=…`, `token: …` and `password is …` were redacted.
 */
import { InboxAdmin } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message, recorder } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

let cases = 0;
it.each([
  ['Invalid token "tok_4f9a8b7c6d5e"', 'tok_4f9a8b7c6d5e'],
  ["invalid secret 'sk_live_4f9a8b7c'", 'sk_live_4f9a8b7c'],
  ["user's password 'hunter2' was rejected", 'hunter2'],
  ['password “correct horse” rejected', 'correct horse'],
])('keeps the quoted value of %j out of last_error and observer events', async (text, secret) => {
  const { events, observer } = recorder();
  cases += 1;
  const consumer = `leaky-${cases}`;
  const inbox = makeInbox(t.prisma, {
    observer,
    handlers: {
      [consumer]: async () => {
        throw new Error(text);
      },
    },
  });
  const { record } = await inbox.accept(message({ consumer }));
  expect(await inbox.runOnce()).toMatchObject({ retried: 1 });
  const stored = await new InboxAdmin(t.prisma).forTenant('acme').get(record.id);
  expect(stored?.lastError).toContain('[redacted]');
  expect(stored?.lastError).not.toContain(secret);
  expect(JSON.stringify(events)).not.toContain(secret);
});

it("keeps JSON.parse's own message whole: the character a body broke at is no secret", async () => {
  const parseError = ((): Error => {
    try {
      JSON.parse('{"a":}');
    } catch (error) {
      return error as Error;
    }
    throw new Error('JSON.parse accepted a broken body');
  })();
  const consumer = 'unparseable';
  const inbox = makeInbox(t.prisma, {
    handlers: {
      [consumer]: async () => {
        throw parseError;
      },
    },
  });
  const { record } = await inbox.accept(message({ consumer }));
  await inbox.runOnce();
  const stored = await new InboxAdmin(t.prisma).forTenant('acme').get(record.id);
  expect(stored?.lastError).toBe(`SyntaxError: ${parseError.message}`);
});
