/**
 * received() (optionChecks.ts), which every refused option and admin argument echoes, redacts with
 * the redaction rules (redactText) and the sensitive-key rule, not rules of its own. First found by
 * the wip/review probe receivedLeaks.test.ts.
 */
import { received } from './optionChecks';
import { createOutboxAdmin, isFerryError } from './index';
import type { SqlExecutor } from './sql/executor';

const SECRET = 'hunter2secret';

it.each([
  ['an array under a sensitive key', { password: [SECRET] }],
  ['a Buffer under a sensitive key', { password: Buffer.from(SECRET) }],
  ['an object under a sensitive key', { credentials: { user: 'a', pass: SECRET } }],
  ['a bearer token', `Bearer ${SECRET}`],
  ['an AWS access key id', 'AKIAABCDEFGHIJKLMNOP'],
  ['an AWS access key id in an object', { region: 'eu', id: 'AKIAABCDEFGHIJKLMNOP' }],
  ['a JSON text with a sensitive array', `{"token":["${SECRET}"]}`],
  ['a URL password', [`amqp://app:${SECRET}@mq`]],
  // The names received() redacted before it used the redactor's rule: pass, auth, signature
  ['a pass under an auth object', { auth: { user: 'app', pass: SECRET } }],
  ['an auth string', { auth: `app:${SECRET}` }],
  ['a signature', { signature: SECRET }],
])('received(): %s', (_name, value) => {
  expect(received(value)).not.toMatch(/hunter2secret|AKIAABCDEFGHIJKLMNOP|104,117,110/);
});

it('an admin argument refused echoes a bearer token an operator pasted in the wrong place', async () => {
  const db: SqlExecutor = {
    inTransaction: false,
    query: () => Promise.reject(new Error('not reached')),
    execute: () => Promise.reject(new Error('not reached')),
    transaction: () => Promise.reject(new Error('not reached')),
  };
  const error = await createOutboxAdmin(db)
    .retry(`Bearer ${SECRET}`)
    .catch((e: unknown) => e);
  expect(isFerryError(error, 'FERRY_VALIDATION_FAILED')).toBe(true);
  expect((error as Error).message).not.toContain(SECRET);
});

it('shows what holds no secret as it is', () => {
  expect(received({ user: 'app', password: SECRET })).toBe('{"user":"app","password":"[redacted]"} (object)');
  expect(received(2147483648)).toBe('2147483648 (number)');
  expect(received('1000')).toBe('"1000" (string)');
});
