import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/**
 * Review finding (failed first): an operator's mistake on the command line is a usage error
 * (exit 2) naming what to fix, and a value the documentation gives as a default is accepted.
 */
describe('ferry usage answers', () => {
  let t: TestDatabase;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it.each([
    ['--database-url', ['--database-url', 'postgres://ops:s3cret@127.0.0.1:notaport/db'], {}],
    ['FERRY_DATABASE_URL', [], { FERRY_DATABASE_URL: 'postgres://ops:s3cret@127.0.0.1:99999/db' }],
    ['DATABASE_URL', [], { DATABASE_URL: 'postgres://ops:s3cret@[::1/db' }],
  ])(
    'a %s that is no URL is a usage error (exit 2) naming it, not PostgreSQL refusing a statement',
    async (source, flag, env) => {
      const io = captureIo();
      const code = await runCli(['outbox', 'stats', '--json', ...flag], io, env);
      const error = (JSON.parse(io.lines[0]!) as { error: { code: string; message: string } }).error;
      // On main: exit 1, FERRY_DATABASE_ERROR, hint "PostgreSQL refused the statement …": nothing
      // reached PostgreSQL; the operator mistyped the URL.
      expect({ code, error: error.code }).toEqual({ code: 2, error: 'FERRY_USAGE' });
      expect(error.message).toContain(source);
      // The answer names the mistake, never the password.
      expect(io.lines.join('')).not.toContain('s3cret');
    },
  );

  it.each([
    ['an empty --database-url', ['--database-url='], {}, "'--database-url <url>' argument is empty"],
    [
      'empty FERRY_DATABASE_URL and DATABASE_URL',
      [],
      { FERRY_DATABASE_URL: '', DATABASE_URL: '' },
      'no database',
    ],
  ])('%s: a usage error, never a guessed local database', async (_what, flag, env, message) => {
    const io = captureIo();
    const code = await runCli(['outbox', 'stats', '--json', ...flag], io, env);
    const error = (JSON.parse(io.lines[0]!) as { error: { code: string; message: string } }).error;
    expect({ code, error: error.code }).toEqual({ code: 2, error: 'FERRY_USAGE' });
    expect(error.message).toContain(message);
  });

  it('health takes --max-failed 0 and --max-dead 0, the documented defaults, explicitly', async () => {
    // An operator's probe script spelling out the defaults gets exit 2 (FERRY_USAGE: "must be an
    // integer between 1 and …") on main, which a liveness probe reads as unhealthy for ever.
    const health = await cli('health', '--max-failed', '0', '--max-dead', '0', '--json');
    expect(JSON.parse(health.lines[0]!)).not.toHaveProperty('error');
    expect([0, 1]).toContain(health.code);
  });
});
