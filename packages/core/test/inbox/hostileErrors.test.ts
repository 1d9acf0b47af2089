/**
 * What a handler throws is the application's, so it can be anything: an error whose message
 * PostgreSQL cannot store (NUL), one of many megabytes, a value that is not an Error at all, one
 * whose every property access throws. Each is recorded (redacted, bounded, storable) and the
 * receipt goes on to RETRYABLE or DEAD; none leaves it PROCESSING or stalls the worker.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const THROWN: Record<string, () => unknown> = {
  nul: () => new Error('bad \u0000 byte'),
  'nul-string': () => 'thrown \u0000 string',
  'lone-surrogate': () => new Error('lone \ud800 surrogate'),
  huge: () => new Error(`password=hunter2 ${'x'.repeat(20_000_000)}`),
  'huge-digits': () => new Error(`${'1'.repeat(5_000_000)}x`),
  // No whitespace before the bound of 4 x 2,000 characters, which falls inside the URL's password:
  // cut there, the URL rule (up to '@') no longer matched and 'user:hunter2secr' was stored.
  'secret-at-bound': () => new Error(`token=${'a'.repeat(7_970)};amqp://user:hunter2secret@host/vhost`),
  'null-prototype': () => Object.create(null) as unknown,
  'throwing-accessors': () =>
    new Proxy(new Error('proxy'), {
      get() {
        throw new Error('trap');
      },
    }),
};

test('every hostile thrown value is recorded and its receipt goes DEAD after its attempts; none stays PROCESSING', async () => {
  const inbox = makeInbox(t.prisma, {
    handlers: Object.fromEntries(
      Object.entries(THROWN).map(([consumer, thrown]) => [
        consumer,
        async () => {
          throw thrown();
        },
      ]),
    ),
    worker: { maxAttempts: 2 },
  });
  await inbox.initialize();
  for (const consumer of Object.keys(THROWN)) {
    await inbox.accept({ consumer, messageId: `m-${consumer}`, tenantId: 't1', payload: { n: 1 } });
  }

  await waitFor('every receipt DEAD', async () => {
    await inbox.runOnce();
    const rows = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status <> 'DEAD'`,
    );
    return rows[0]?.n === 0 ? true : undefined;
  });
  const rows = await t.db.query<{ consumer: string; attempts: number; last_error: string }>(
    `SELECT consumer, attempts, last_error FROM ferry_inbox_receipts ORDER BY consumer`,
  );
  const byConsumer = new Map(rows.map((row) => [row.consumer, row]));
  for (const row of rows) {
    expect([row.consumer, row.attempts, row.last_error.length <= 2_000]).toEqual([row.consumer, 2, true]);
  }
  expect(byConsumer.get('nul')?.last_error).toBe('Error: bad \ufffd byte');
  expect(byConsumer.get('nul-string')?.last_error).toBe('non-error thrown: thrown \ufffd string');
  expect(byConsumer.get('lone-surrogate')?.last_error).toBe('Error: lone \ufffd surrogate');
  expect(byConsumer.get('huge')?.last_error).toBe('Error: password=[redacted] …');
  expect(byConsumer.get('secret-at-bound')?.last_error).not.toMatch(/user|hunter/);
});
