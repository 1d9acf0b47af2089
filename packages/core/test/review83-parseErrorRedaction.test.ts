/**
 * Review 83: "Error details are redacted before persistence and observation", and docs/inbox.md
 * (Redaction) cuts long texts so that "the cut must not leave a secret half there, which its rule
 * would no longer match (a URL's password without the '@' after it)" (redact.ts bounded()).
 *
 * A handler's `parse` that throws is wrapped in InboxInvalidPayloadError (process.ts
 * invokeHandler) whose message is `describeError(error, undefined, (text) => text)`: the original
 * text cut at 2,000 characters by a plain truncate, not redacted. A database URL whose password
 * straddles that cut becomes `postgres://app:S3cretPass…`, which the URL rule no longer matches
 * (no '@'). When the receipt goes DEAD, that message is redacted and cut again: a long secret
 * earlier in the text (`password=<1,600 characters>`) shrinks to `password=[redacted]`, which
 * brings the half password inside what is kept. The password's first characters are then stored
 * in last_error, given to the observer's `dead` event and logged ("inbox receipt DEAD").
 */
import pino from 'pino';
import { Writable } from 'node:stream';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow, recorder } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it("a secret in a parse() error is not stored, observed or logged half-redacted after the wrapper's cut", async () => {
  const password = 'S3cretPassw0rd';
  // 'Error: ' + this text puts the password across the 2,000th character.
  const text = `password=${'p'.repeat(1_600)} ${'filler '.repeat(51)}postgres://app:${password}@db.internal:5432/orders`;
  const lines: string[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  const { events, observer } = recorder();
  const inbox = makeInbox(t.prisma, {
    logger,
    observer,
    handlers: {
      orders: {
        parse: () => {
          throw new Error(text);
        },
        handle: async () => undefined,
      },
    },
  });
  const { record } = await inbox.accept(message());
  await inbox.runOnce();
  const row = await receiptRow(t, record.id);
  expect(row.status).toBe('DEAD');
  const stored = String(row.last_error);
  const observed = events.filter((event) => event.type === 'dead').map((event) => JSON.stringify(event));
  const leaked = (where: string) => where.includes(password.slice(0, 6));
  // Received: each holds `postgres://app:S3cretPass…`.
  expect({
    stored: leaked(stored),
    observed: observed.some(leaked),
    logged: lines.some(leaked),
  }).toEqual({ stored: false, observed: false, logged: false });
});
