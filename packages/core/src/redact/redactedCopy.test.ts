/**
 * The cause of a FerryError (redactedCopy): a value under a sensitive key is replaced whole,
 * whatever its type, by the redactor's own sensitive-key rule (its extra keys, its allowed ones).
 * First found by the wip/review probe redactedCauseLeaks.test.ts.
 */
import { inspect } from 'node:util';
import { translateDbError } from '../sql/dbErrors';
import { createRedactor } from './redact';

const SECRET = 'hunter2secret';

function driverError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED', ...fields });
}

describe('values under sensitive keys in a translated error', () => {
  it('a driver error carrying its connection options keeps no password nor Authorization header', () => {
    // A driver's error carrying its connection options (mysql2, tedious, axios-style `config`).
    const driver = driverError({
      config: { user: 'app', password: SECRET, headers: { Authorization: `Token ${SECRET}` } },
    });
    const cause = translateDbError(driver, 'outbox emit').cause as { config: Record<string, unknown> };
    expect(inspect(cause, { depth: 10 })).not.toContain(SECRET);
    expect(cause.config).toEqual({
      user: 'app',
      password: '[redacted]',
      headers: { Authorization: '[redacted]' },
    });
  });

  it.each([
    ['a number', 12345678],
    ['an array', [SECRET]],
    ['a Buffer', Buffer.from(SECRET)],
    ['an object', { value: SECRET }],
    ['a string with no secret shape', SECRET],
  ])('replaces %s under a sensitive key whole', (_name, value) => {
    const cause = translateDbError(driverError({ meta: { api_key: value, sessionId: value } }), 'op').cause;
    expect((cause as { meta: unknown }).meta).toEqual({ api_key: '[redacted]', sessionId: '[redacted]' });
  });

  it("uses the component's redactor: its extra keys are redacted, its allowed keys kept", () => {
    const redact = createRedactor({ keys: ['ssn'], allow: ['token'] });
    const cause = translateDbError(
      driverError({ meta: { ssn: 123456789, token: 'page-2' } }),
      'op',
      redact,
    ).cause;
    expect((cause as { meta: unknown }).meta).toEqual({ ssn: '[redacted]', token: 'page-2' });
  });

  it('keeps an absent value as it is (undefined, null)', () => {
    const cause = translateDbError(driverError({ password: null }), 'op').cause;
    expect((cause as { password: unknown }).password).toBeNull();
  });
});
