/**
 * Review finding (failed first), review 95. A --database-url node-postgres cannot read is a usage
 * error quoting node-postgres's own message unredacted. That message quotes what it read from the
 * URL: a file named by `sslrootcert` / `sslcert` / `sslkey` that does not exist (ENOENT, open
 * '<path>'), and a path may hold a connection URL with its password.
 * What the user sees: the password printed on the terminal and in CI logs.
 * What should happen: the message is redacted as every other error the CLI prints
 * (describeError), and still says why.
 */
import { runCli } from '@ferry/cli';
import { captureIo } from './io';

describe('review95: a --database-url node-postgres cannot read', () => {
  it('is a usage error whose message shows no password', async () => {
    const io = captureIo();
    const path = encodeURIComponent('/nonexistent/postgres://app:s3cret@db:5432/prod');
    const url = `postgres://u@localhost/db?sslrootcert=${path}`;
    const code = await runCli(['outbox', 'stats', '--database-url', url], io, {});
    expect(code).toBe(2);
    const printed = [...io.errors, ...io.lines].join('\n');
    expect(printed).toContain('ENOENT');
    expect(printed).not.toContain('s3cret');
  });
});
