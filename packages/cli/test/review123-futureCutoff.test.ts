/**
 * Review 123: `purge-sent` / `purge-payloads --before <instant in the future>` purged everything.
 * An operator who types 2062 for 2026 (or pastes a date of the wrong century) asked for a cutoff of
 * their retention policy and got "every SENT event" / "every COMPLETED payload": nothing is ever
 * published or completed after now, so a future cutoff is the whole table, silently.
 *
 * Contract: spec 002 "Choose the cutoff from your retention policy"; a cutoff later than now is no
 * retention policy. The CLI refuses it as a usage error (exit 2, naming --before and the way to ask
 * for everything deliberately: an age, `0s` being "up to now"), before it connects. The library's
 * purgeSent / purgeCompletedPayload take any Date (an application's own `new Date()` is a few
 * milliseconds ahead of the database's clock; tests pass a date after their fixtures).
 */
import { runCli } from '@ferry/cli';
import { useAdminDatabase } from '../../../test-support/adminFixture';
import { captureIo } from './io';

const database = useAdminDatabase();

async function cli(...argv: string[]) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', database.t().url], io, { FERRY_ACTOR: 'ops@test' });
  return { code, ...io };
}

async function counts() {
  const [row] = await database.t().db.query<{ sent: number; payloads: number }>(
    `SELECT (SELECT count(*)::int FROM outbox_events WHERE status = 'SENT') AS sent,
            (SELECT count(*)::int FROM ferry_inbox_receipts WHERE status = 'COMPLETED' AND payload IS NOT NULL) AS payloads`,
  );
  return row;
}

describe('a purge cutoff in the future is refused', () => {
  it.each([
    ['outbox', 'purge-sent'],
    ['inbox', 'purge-payloads'],
  ])(
    '%s %s --before 2062-01-01 (a typo for 2026) is a usage error and purges nothing',
    async (group, command) => {
      await database.fixture();
      const before = await counts();
      for (const dryRun of [[], ['--dry-run']]) {
        const run = await cli(group, command, '--before', '2062-01-01', '--tenant', 'acme', ...dryRun);
        expect({ code: run.code, lines: run.lines }).toEqual({ code: 2, lines: [] });
        expect(run.errors.join('\n')).toMatch(/--before.*2062-01-01.*future.*0s/s);
      }
      expect(await counts()).toEqual(before);
    },
  );

  it('an age of 0s purges everything up to now, deliberately', async () => {
    await database.fixture();
    const sent = await cli('outbox', 'purge-sent', '--before', '0s', '--tenant', 'acme');
    const payloads = await cli('inbox', 'purge-payloads', '--before', '0s', '--tenant', 'acme');
    expect({ sent: sent.code, payloads: payloads.code }).toEqual({ sent: 0, payloads: 0 });
    const [row] = await database.t().db.query<{ sent: number; payloads: number }>(
      `SELECT (SELECT count(*)::int FROM outbox_events WHERE status = 'SENT' AND tenant_id = 'acme') AS sent,
              (SELECT count(*)::int FROM ferry_inbox_receipts
                 WHERE status = 'COMPLETED' AND payload IS NOT NULL AND tenant_id = 'acme') AS payloads`,
    );
    expect(row).toEqual({ sent: 0, payloads: 0 });
  });
});
