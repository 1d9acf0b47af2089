/**
 * Review 62: the `ferry` command line as an operator uses it at night. Each test here failed on
 * the code it was written against; see the report of review 62.
 */
import { randomUUID } from 'node:crypto';
import { createRelay, emitMany, Inbox, InboxPermanentError } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { captureIo } from './io';

jest.setTimeout(60_000);

let t: TestDatabase;
let inbox: Inbox;
let failing = true;

async function cli(...argv: string[]) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
  return { code, ...io };
}

async function receipt(id: string): Promise<{ status: string; row_version: number } | undefined> {
  const [row] = await t.db.query<{ status: string; row_version: number }>(
    'SELECT status, row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row;
}

/** A receipt of `tenantId` settled in `status` (DEAD while the handler fails, else COMPLETED). */
async function settled(
  tenantId: string,
  status: 'DEAD' | 'COMPLETED',
): Promise<{ id: string; version: number }> {
  failing = status === 'DEAD';
  const { record } = await inbox.accept({
    consumer: 'work',
    messageId: `m-${randomUUID()}`,
    tenantId,
    payload: { n: 1 },
  });
  for (let i = 0; i < 50 && (await receipt(record.id))?.status !== status; i += 1) await inbox.runOnce();
  const row = await receipt(record.id);
  expect(row?.status).toBe(status);
  return { id: record.id, version: row!.row_version };
}

beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, {
    logger: pino({ level: 'silent' }),
    global: 'shared',
    handlers: {
      work: async () => {
        if (failing) throw new InboxPermanentError('handler is broken');
      },
      rebuild: async () => {},
    },
    worker: { pollIntervalMs: 20, leaseMs: 2_000, heartbeatIntervalMs: 200, retryBaseMs: 1, retryMaxMs: 1 },
  });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

describe('review62: a malformed value is a usage error (exit 2) before anything changes', () => {
  it('inbox requeue A:v B:0 requeues nothing: version 0 is no version a receipt has (README: a malformed value is exit 2, nothing touched)', async () => {
    const a = await settled('night', 'DEAD');
    const b = await settled('night', 'DEAD');
    const run = await cli(
      'inbox',
      'requeue',
      `${a.id}:${a.version}`,
      `${b.id}:0`,
      '--tenant',
      'night',
      '--reason',
      'card service fixed',
    );
    expect({ code: run.code, errors: run.errors.join('\n') }).toEqual({
      code: 2,
      errors: expect.stringContaining('FERRY_USAGE'),
    });
    expect((await receipt(a.id))?.status).toBe('DEAD');
  });

  it('inbox requeue <id>:3 --expected-version 4 is refused (which version was observed?), as <id>:3 <id>:4 is', async () => {
    const a = await settled('night', 'DEAD');
    const run = await cli(
      'inbox',
      'requeue',
      `${a.id}:${a.version}`,
      '--expected-version',
      String(a.version + 1),
      '--tenant',
      'night',
      '--reason',
      'r',
    );
    expect(run.code).toBe(2);
    expect(run.errors.join('\n')).toContain('FERRY_USAGE');
    expect((await receipt(a.id))?.status).toBe('DEAD');
  });

  const id = '3f0c0000-0000-4000-8000-0000000000e1';
  it.each([
    ['outbox list --tenant ""', ['outbox', 'list', '--tenant', '']],
    ['inbox list --tenant ""', ['inbox', 'list', '--tenant', '']],
    ['outbox list --cursor garbage', ['outbox', 'list', '--cursor', 'garbage']],
    ['inbox list --global --cursor garbage', ['inbox', 'list', '--global', '--cursor', 'garbage']],
    ['outbox mark-failed --reason ""', ['outbox', 'mark-failed', id, '--reason', '']],
    ['outbox retry --actor ""', ['outbox', 'retry', id, '--actor', '']],
    [
      'inbox replay --expected-version 3000000000 (past the int4 row version)',
      [
        'inbox',
        'replay',
        id,
        '--expected-version',
        '3000000000',
        '--target-consumer',
        'rebuild',
        '--tenant',
        'night',
        '--reason',
        'r',
      ],
    ],
    ['sql --after ""', ['sql', '--after', '']],
  ])('%s is exit 2 FERRY_USAGE, not a FERRY_* failure (exit 1)', async (_name, argv) => {
    const run = await cli(...argv);
    expect({ code: run.code, error: run.errors[0] }).toEqual({
      code: 2,
      error: expect.stringContaining('FERRY_USAGE'),
    });
  });

  it('outbox purge-sent --before 2026-02-30 (no such day) is refused, and deletes no event published on March 1st', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: {}, tenantId: 'night' }]);
    const relay = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      logger: pino({ level: 'silent' }),
    });
    await relay.runOnce();
    await relay.close();
    await t.db.query(
      `UPDATE outbox_events SET created_at = '2026-03-01T11:00:00Z', published_at = '2026-03-01T12:00:00Z'
       WHERE id = $1::uuid AND status = 'SENT'`,
      [ids[0]],
    );
    const run = await cli('outbox', 'purge-sent', '--before', '2026-02-30');
    const [kept] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_events WHERE id = $1::uuid',
      [ids[0]],
    );
    expect({ code: run.code, kept: kept?.n }).toEqual({ code: 2, kept: 1 });
  });
});

describe('review62: the README literally', () => {
  it('top takes its per-probe --timeout ("health and top keep their per-probe --timeout (5 s)")', async () => {
    const run = await cli('top', '--iterations', '1', '--timeout', '2s');
    expect(run.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.lines).toHaveLength(1);
  });
});

describe('review62: a database that never answers', () => {
  it('no connection in time is FERRY_DATABASE_UNAVAILABLE, never FERRY_TIMEOUT "did not answer a statement" (none was sent)', async () => {
    const proxy = await halfOpenProxy(new URL(t.url));
    proxy.silence();
    try {
      const io = captureIo();
      const code = await runCli(
        ['outbox', 'stats', '--statement-timeout', '1s', '--database-url', proxy.url(t.url)],
        io,
        {},
      );
      expect(code).toBe(1);
      expect(io.errors[0]).toContain('FERRY_DATABASE_UNAVAILABLE');
      expect(io.errors.join('\n')).toContain('check --database-url');
    } finally {
      proxy.close();
    }
  });
});
