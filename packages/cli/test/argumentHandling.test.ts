import { randomUUID } from 'node:crypto';
import { emitMany, Inbox, InboxPermanentError } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

/**
 * Review finding (failed first), review 11: the CLI's argument handling. One source of truth for
 * each value (commander's parsed options), ids given twice acted on once, and a value no consumer
 * can take (a timer past 2,147,483,647 ms, a zero deadline, a connection string that is no URL)
 * refused as a usage error (exit 2) naming the flag or variable, never answered as a failure.
 */
describe('ferry argument handling', () => {
  let t: TestDatabase;

  async function cli(argv: string[], env: NodeJS.ProcessEnv = { FERRY_ACTOR: 'ops@test' }) {
    const io = captureIo();
    const code = await runCli(argv, io, env);
    return { code, ...io };
  }

  /** A usage error (exit 2) whose message names `flag`. */
  function usageNaming(r: { code: number; errors: string[] }, flag: string) {
    return { code: r.code, named: r.errors.some((e) => e.includes(flag)) };
  }

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('Review finding (failed first): outbox mark-failed of one id given twice marks it once and answers once', async () => {
    const [id] = (await emitMany(t.db, [{ type: 'order.placed', payload: {}, tenantId: 'dup' }])).ids;
    const r = await cli([
      'outbox',
      'mark-failed',
      id!,
      id!.toUpperCase(),
      '--reason',
      'poison',
      '--database-url',
      t.url,
    ]);
    expect({ code: r.code, lines: r.lines }).toEqual({ code: 0, lines: [`${id} applied`] });
  });

  it('Review finding (failed first): inbox requeue of one id:version given twice requeues it once; two versions of one id are a usage error', async () => {
    const inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      handlers: {
        work: async () => {
          throw new InboxPermanentError('broken');
        },
      },
    });
    try {
      const { record } = await inbox.accept({
        consumer: 'work',
        messageId: randomUUID(),
        tenantId: 'dup',
        payload: {},
      });
      const status = async () =>
        (
          await t.db.query<{ status: string; row_version: number }>(
            'SELECT status, row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
            [record.id],
          )
        )[0]!;
      for (let i = 0; i < 50 && (await status()).status !== 'DEAD'; i += 1) await inbox.runOnce();
      const version = (await status()).row_version;
      const common = ['--reason', 'fixed', '--tenant', 'dup', '--database-url', t.url];
      const twoVersions = await cli([
        'inbox',
        'requeue',
        `${record.id}:${version}`,
        `${record.id}:${version + 1}`,
        ...common,
      ]);
      expect(usageNaming(twoVersions, record.id)).toEqual({ code: 2, named: true });
      const r = await cli([
        'inbox',
        'requeue',
        `${record.id}:${version}`,
        `${record.id.toUpperCase()}:${version}`,
        ...common,
      ]);
      expect({ code: r.code, lines: r.lines }).toEqual({ code: 0, lines: [`${record.id} applied`] });
    } finally {
      await inbox.close();
    }
  });

  it('Review finding (failed first): a repeated --database-url connects where the parsed option (the last one) says', async () => {
    const wrong = t.url.replace(/\/([^/?]+)(\?|$)/, '/ferry_review11_no_such_db$2');
    const r = await cli(['outbox', 'stats', '--database-url', wrong, '--database-url', t.url]);
    expect({ code: r.code, errors: r.errors }).toEqual({ code: 0, errors: [] });
    const reversed = await cli(['outbox', 'stats', `--database-url=${t.url}`, `--database-url=${wrong}`]);
    expect(reversed.code).toBe(1);
  });

  it.each([
    ['top', '--interval', '25d'],
    ['top', '--interval', '0ms'],
    ['health', '--timeout', '0s'],
    ['health', '--timeout', '30d'],
    ['health', '--max-pending-age', '999999999d'],
    ['outbox list', '--older-than', '999999999d'],
    ['outbox retry', '--older-than', '999999999d'],
    ['audit list', '--since', '999999999d'],
    ['outbox purge-sent', '--before', '999999999d'],
  ])(
    'Review finding (failed first): %s %s %s is a usage error naming the flag (top refuses, health --timeout)',
    async (command, flag, value) => {
      // top stops after one refresh should the value be taken.
      const once = command === 'top' ? ['--iterations', '1'] : [];
      const r = await cli([...command.split(' '), flag, value, ...once, '--database-url', t.url]);
      expect(usageNaming(r, flag)).toEqual({ code: 2, named: true });
    },
  );

  it.each([
    ['DATABASE_URL', [], { DATABASE_URL: 'orders' }],
    ['FERRY_DATABASE_URL', [], { FERRY_DATABASE_URL: 'orders' }],
    ['--database-url', ['--database-url', 'orders'], {}],
  ])(
    'Review finding (failed first): a %s that is no URL is a usage error naming it',
    async (source, flag, env) => {
      const r = await cli(['outbox', 'stats', ...flag], env);
      expect(usageNaming(r, source)).toEqual({ code: 2, named: true });
    },
  );
});
