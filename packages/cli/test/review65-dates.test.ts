/**
 * Review 65: `--before` / `--since` after the strict parser of review 62. The README promises an
 * ISO timestamp (`2026-03-01T12:00:00.5Z`, `…+01:00`); RFC 3339 (the ISO profile) lets `T` and `Z`
 * be lower case and takes any number of fraction digits, and the timestamp PostgreSQL itself prints
 * for a timestamptz (psql, DateStyle ISO: `2026-03-01 12:00:00.123456+00`) is what an operator
 * copies. Forms the previous parser took (lower case, `+0100`) are refused now.
 */
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

jest.setTimeout(60_000);

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function cli(...argv: string[]) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
  return { code, ...io };
}

describe('review65: ISO / RFC 3339 timestamps the README promises are taken by --since / --before', () => {
  it.each([
    ['lower-case t and z (RFC 3339 5.6 NOTE; the previous parser took it)', '2026-03-01t12:00:00z'],
    ['lower-case z only', '2026-03-01T12:00:00z'],
    ['ten fraction digits (RFC 3339 time-secfrac: 1*DIGIT)', '2026-03-01T12:00:00.1234567890Z'],
    ["PostgreSQL's own timestamptz output (psql, DateStyle ISO)", '2026-03-01 12:00:00.123456+00'],
    ['an hour-only offset (ISO 8601 ±hh)', '2026-03-01T12:00:00+01'],
    ['a basic-format offset (the previous parser took it)', '2026-03-01T12:00:00+0100'],
  ])('audit list --since %s is a timestamp, not a usage error', async (_what, when) => {
    const run = await cli('audit', 'list', '--since', when, '--json');
    expect({ code: run.code, errors: run.errors.join('\n') }).toEqual({ code: 0, errors: '' });
  });

  it('outbox purge-sent --before 2026-03-01T12:00:00+01 means 11:00 UTC, as PostgreSQL reads it', async () => {
    const run = await cli(
      'outbox',
      'purge-sent',
      '--before',
      '2026-03-01T12:00:00+01',
      '--dry-run',
      '--json',
    );
    expect(run.code).toBe(0);
  });
});
