import { randomUUID } from 'node:crypto';
import { Inbox, InboxPermanentError } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

describe('ferry inbox commands', () => {
  let t: TestDatabase;
  let inbox: Inbox;
  let fail = true;
  const handled: unknown[] = [];

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io);
    return { code, ...io };
  }

  async function statusOf(id: string): Promise<string | undefined> {
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [id],
    );
    return row?.status;
  }

  async function deadReceipt(tenantId: string | null): Promise<string> {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: `m-${randomUUID()}`,
      tenantId,
      payload: { n: 1 },
    });
    for (let i = 0; i < 50 && (await statusOf(record.id)) !== 'DEAD'; i += 1) await inbox.runOnce();
    expect(await statusOf(record.id)).toBe('DEAD');
    return record.id;
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    inbox = new Inbox(t.prisma, {
      logger: pino({ level: 'silent' }),
      global: 'shared',
      handlers: {
        work: async (payload) => {
          if (fail) throw new InboxPermanentError('handler is broken');
          handled.push(payload);
        },
      },
      worker: { pollIntervalMs: 20, leaseMs: 2_000, heartbeatIntervalMs: 200, retryBaseMs: 1, retryMaxMs: 1 },
    });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  it('stats and list DEAD per tenant and for the global scope', async () => {
    const acme = await deadReceipt('acme');
    const globalId = await deadReceipt(null);
    await deadReceipt('other');

    const stats = await cli('inbox', 'stats', '--tenant', 'acme');
    expect(stats.code).toBe(0);
    expect(stats.lines).toEqual(expect.arrayContaining(['DEAD 1', 'total 1']));
    const globalStats = await cli('inbox', 'stats', '--global', '--json');
    expect(JSON.parse(globalStats.lines[0]!)).toMatchObject({ counts: { DEAD: 1 }, total: 1 });

    const list = await cli('inbox', 'list', '--status', 'DEAD', '--tenant', 'acme');
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(1);
    expect(list.lines[0]).toMatch(
      new RegExp(`^${acme} DEAD version=\\d+ consumer=work .*tenant=acme .*handler is broken"$`),
    );

    const global = await cli('inbox', 'list', '--status', 'DEAD', '--global', '--json');
    const page = JSON.parse(global.lines[0]!) as {
      records: Array<{ id: string }>;
      nextCursor: string | null;
    };
    expect(page.records.map((r) => r.id)).toEqual([globalId]);
    expect(page.nextCursor).toBeNull();
  });

  it('requeue at the observed version, then the fixed handler completes it; a stale version is a conflict', async () => {
    const id = await deadReceipt('requeue-tenant');
    const list = await cli('inbox', 'list', '--status', 'DEAD', '--tenant', 'requeue-tenant', '--json');
    const [record] = (JSON.parse(list.lines[0]!) as { records: Array<{ id: string; rowVersion: number }> })
      .records;
    expect(record!.id).toBe(id);

    const wrongScope = await cli(
      'inbox',
      'requeue',
      id,
      '--expected-version',
      String(record!.rowVersion),
      '--reason',
      'fixed',
      '--actor',
      'ops',
      '--tenant',
      'acme',
    );
    expect(wrongScope.code).toBe(1);
    expect(wrongScope.errors.join('\n')).toContain('FERRY_NOT_FOUND');

    const requeued = await cli(
      'inbox',
      'requeue',
      id,
      '--expected-version',
      String(record!.rowVersion),
      '--reason',
      'handler fixed',
      '--actor',
      'ops@example.com',
      '--tenant',
      'requeue-tenant',
    );
    expect(requeued.code).toBe(0);
    expect(requeued.lines).toEqual([`${id} requeued status=PENDING version=${record!.rowVersion + 1}`]);

    fail = false;
    for (let i = 0; i < 50 && (await statusOf(id)) !== 'COMPLETED'; i += 1) await inbox.runOnce();
    expect(await statusOf(id)).toBe('COMPLETED');
    expect(handled).toHaveLength(1);

    const stale = await cli(
      'inbox',
      'requeue',
      id,
      '--expected-version',
      String(record!.rowVersion),
      '--reason',
      'again',
      '--actor',
      'ops',
      '--tenant',
      'requeue-tenant',
    );
    expect(stale.code).toBe(1);
    expect(stale.errors.join('\n')).toMatch(/^ferry inbox requeue: FERRY_STATE_CONFLICT: /);
  });

  it('usage errors exit 2: scope is required and exclusive, flags are validated', async () => {
    const id = randomUUID();
    const cases: string[][] = [
      ['inbox', 'stats'],
      ['inbox', 'stats', '--tenant', 'a', '--global'],
      ['inbox', 'list', '--global'],
      ['inbox', 'list', '--status', 'FAILED', '--global'],
      ['inbox', 'requeue', id, '--reason', 'r', '--actor', 'a', '--global'],
      ['inbox', 'requeue', id, '--expected-version', 'one', '--reason', 'r', '--actor', 'a', '--global'],
      ['inbox', 'requeue', id, '--expected-version', '1', '--actor', 'a', '--global'],
      ['inbox', 'requeue', id, '--expected-version', '1', '--reason', 'r', '--global'],
      ['inbox', 'requeue', '--expected-version', '1', '--reason', 'r', '--actor', 'a', '--global'],
    ];
    for (const argv of cases) {
      const io = captureIo();
      const code = await runCli([...argv, '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io);
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(io.errors.join('\n')).toContain('usage: ferry');
    }
  });
});
