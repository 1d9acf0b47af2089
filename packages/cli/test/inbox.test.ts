import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { Inbox, InboxPermanentError } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { receiptLock } from '../../core/src/inbox/sql/fragments';
import { captureIo } from './io';

describe('ferry inbox commands', () => {
  let t: TestDatabase;
  let inbox: Inbox;
  let fail = true;
  const handled: unknown[] = [];

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  async function rowOf(
    id: string,
  ): Promise<{ status: string; row_version: number; attempts: number } | undefined> {
    const [row] = await t.db.query<{ status: string; row_version: number; attempts: number }>(
      'SELECT status, row_version, attempts FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [id],
    );
    return row;
  }

  async function deadReceipt(tenantId: string | null): Promise<string> {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: `m-${randomUUID()}`,
      tenantId,
      payload: { n: 1 },
    });
    for (let i = 0; i < 50 && (await rowOf(record.id))?.status !== 'DEAD'; i += 1) await inbox.runOnce();
    expect((await rowOf(record.id))?.status).toBe('DEAD');
    return record.id;
  }

  async function settle(id: string, status: string): Promise<void> {
    for (let i = 0; i < 50 && (await rowOf(id))?.status !== status; i += 1) await inbox.runOnce();
    expect((await rowOf(id))?.status).toBe(status);
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
        rebuild: async () => {},
      },
      worker: { pollIntervalMs: 20, leaseMs: 2_000, heartbeatIntervalMs: 200, retryBaseMs: 1, retryMaxMs: 1 },
    });
  });
  afterAll(async () => {
    await inbox.close();
    await t.drop();
  });

  it('stats, list and show per tenant and for the global scope', async () => {
    const acme = await deadReceipt('acme');
    const globalId = await deadReceipt(null);
    await deadReceipt('other');

    const stats = await cli('inbox', 'stats', '--tenant', 'acme');
    expect(stats.code).toBe(0);
    expect(stats.lines).toEqual(expect.arrayContaining(['DEAD 1', 'total 1']));
    const globalStats = await cli('inbox', 'stats', '--global', '--json');
    expect(JSON.parse(globalStats.lines[0]!)).toMatchObject({
      kind: 'inbox',
      scope: 'global',
      counts: { DEAD: 1 },
      total: 1,
    });

    const list = await cli('inbox', 'list', '--status', 'Dead', '--tenant', 'acme');
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(1);
    expect(list.lines[0]).toMatch(
      new RegExp(`^${acme} DEAD version=\\d+ consumer=work .*tenant=acme .*handler is broken"$`),
    );

    const global = await cli('inbox', 'list', '--status', 'DEAD', '--global', '--json');
    const page = JSON.parse(global.lines[0]!) as { items: Array<{ id: string }>; nextCursor: string | null };
    expect(page.items.map((r) => r.id)).toEqual([globalId]);
    expect(page.nextCursor).toBeNull();

    const shown = await cli('inbox', 'show', acme, '--tenant', 'acme', '--json');
    expect(JSON.parse(shown.lines[0]!)).toMatchObject({
      item: { id: acme, status: 'DEAD', consumer: 'work' },
    });
    const elsewhere = await cli('inbox', 'show', acme, '--global');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.errors[0]).toMatch(/^ferry inbox show: FERRY_NOT_FOUND: /);
  });

  it('requeue at the observed version (dry run first), then the fixed handler completes it; a stale version is a conflict', async () => {
    const id = await deadReceipt('requeue-tenant');
    const version = (await rowOf(id))!.row_version;

    const wrongScope = await cli(
      'inbox',
      'requeue',
      `${id}:${version}`,
      '--reason',
      'fixed',
      '--tenant',
      'acme',
    );
    expect(wrongScope.code).toBe(1);
    expect(wrongScope.lines).toEqual([`${id} not_found`]);

    const dry = await cli(
      'inbox',
      'requeue',
      id,
      '--expected-version',
      String(version),
      '--reason',
      'fixed',
      '--tenant',
      'requeue-tenant',
      '--dry-run',
    );
    expect(dry.code).toBe(0);
    expect(dry.lines).toEqual([`${id} applied (dry run)`]);
    expect((await rowOf(id))?.status).toBe('DEAD');

    const requeued = await cli(
      'inbox',
      'requeue',
      `${id}:${version}`,
      '--reason',
      'handler fixed',
      '--tenant',
      'requeue-tenant',
      '--json',
    );
    expect(requeued.code).toBe(0);
    expect(JSON.parse(requeued.lines[0]!)).toEqual({
      action: 'inbox requeue',
      dryRun: false,
      results: [{ id, outcome: 'applied', status: 'PENDING', rowVersion: version + 1 }],
      counts: { applied: 1 },
    });

    fail = false;
    await settle(id, 'COMPLETED');
    expect(handled).toHaveLength(1);

    const stale = await cli(
      'inbox',
      'requeue',
      `${id}:${version}`,
      '--reason',
      'again',
      '--tenant',
      'requeue-tenant',
    );
    expect(stale.code).toBe(1);
    const completed = (await rowOf(id))!.row_version;
    expect(stale.lines).toEqual([
      `${id} conflict: expected DEAD at version ${version}, found COMPLETED at version ${completed}`,
    ]);
    fail = true;
  });

  it('requeue --all takes every DEAD receipt of the scope at its listed version, in batches', async () => {
    const ids = [await deadReceipt('bulk'), await deadReceipt('bulk'), await deadReceipt('bulk')];
    const done = await cli(
      'inbox',
      'requeue',
      '--all',
      '--tenant',
      'bulk',
      '--reason',
      'bulk fix',
      '--batch-size',
      '2',
    );
    expect(done.code).toBe(0);
    expect(done.lines.map((l) => l.split(' ')[0]).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await rowOf(id))?.status).toBe('PENDING');
    const both = await cli('inbox', 'requeue', ids[0]!, '--all', '--tenant', 'bulk', '--reason', 'r');
    expect(both.code).toBe(2);
    const noVersion = await cli('inbox', 'requeue', ids[0]!, '--tenant', 'bulk', '--reason', 'r');
    expect(noVersion.code).toBe(2);
    expect(noVersion.errors[0]).toContain('needs the version you observed');
  });

  it('replay a COMPLETED receipt to another consumer; the same --request-id is a duplicate', async () => {
    fail = false;
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'rp',
      payload: { n: 2 },
    });
    await settle(record.id, 'COMPLETED');
    fail = true;
    const version = (await rowOf(record.id))!.row_version;
    const requestId = randomUUID();
    const args = [
      'inbox',
      'replay',
      record.id,
      '--expected-version',
      String(version),
      '--target-consumer',
      'rebuild',
      '--reason',
      'rebuild view',
      '--request-id',
      requestId,
      '--tenant',
      'rp',
    ];
    const first = await cli(...args, '--json');
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.lines[0]!) as { results: Array<{ outcome: string; replayId: string }> };
    expect(answer.results[0]!.outcome).toBe('accepted');
    expect((await rowOf(answer.results[0]!.replayId))?.status).toBe('PENDING');
    const again = await cli(...args);
    expect(again.code).toBe(0);
    expect(again.lines).toEqual([
      `${record.id} duplicate replayId=${answer.results[0]!.replayId} requestId=${requestId}`,
    ]);
  });

  it('release gives a dead worker claims back; purge-payloads drops old COMPLETED payloads', async () => {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'rl',
      payload: {},
    });
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = gen_random_uuid(), attempts = 1,
         lease_expires_at = now() - interval '1 minute' WHERE id = $1::uuid`,
      [record.id],
    );
    const released = await cli('inbox', 'release', '--tenant', 'rl');
    expect(released.lines).toEqual([`${record.id} applied`]);
    expect(await rowOf(record.id)).toMatchObject({ status: 'PENDING', attempts: 0 });

    fail = false;
    await settle(record.id, 'COMPLETED');
    fail = true;
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET completed_at = now() - interval '40 days' WHERE id = $1::uuid`,
      [record.id],
    );
    const dry = await cli(
      'inbox',
      'purge-payloads',
      '--before',
      '30d',
      '--tenant',
      'rl',
      '--dry-run',
      '--json',
    );
    expect(JSON.parse(dry.lines[0]!)).toMatchObject({ dryRun: true, counts: { purged: 1 } });
    const real = await cli('inbox', 'purge-payloads', '--before', '30d', '--tenant', 'rl');
    expect(real.code).toBe(0);
    const [row] = await t.db.query<{ payload: unknown }>(
      'SELECT payload FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [record.id],
    );
    expect(row?.payload).toBeNull();
  });

  it('usage errors exit 2: scope is required and exclusive, values are validated', async () => {
    const id = randomUUID();
    const cases: string[][] = [
      ['inbox', 'stats'],
      ['inbox', 'stats', '--tenant', 'a', '--global'],
      ['inbox', 'list', '--status', 'FAILED', '--global'],
      ['inbox', 'requeue', id, '--expected-version', 'one', '--reason', 'r', '--global'],
      ['inbox', 'requeue', `${id}:1`, '--global'],
      ['inbox', 'requeue', '--reason', 'r', '--global'],
      ['inbox', 'replay', id, '--reason', 'r', '--global'],
      ['inbox', 'release', '--force', '--global'],
      ['inbox', 'purge-payloads', '--global'],
    ];
    for (const argv of cases) {
      const io = captureIo();
      const code = await runCli([...argv, '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io);
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(io.errors.join('\n')).toContain('FERRY_USAGE');
    }
  });

  // Review finding (failed first): --force released a claim whose handler was still running.
  it('release --force leaves a receipt whose handler transaction is alive (outcome running)', async () => {
    const { record } = await inbox.accept({
      consumer: 'work',
      messageId: randomUUID(),
      tenantId: 'live',
      payload: {},
    });
    const token = randomUUID();
    await t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PROCESSING', claim_token = $2::uuid, attempts = 1,
         lease_expires_at = now() + interval '1 minute' WHERE id = $1::uuid`,
      [record.id, token],
    );
    // What a running handler transaction holds (beginHandler).
    const handler = listened(new Client({ connectionString: t.url }));
    await handler.connect();
    try {
      await handler.query('BEGIN');
      await handler.query(`SELECT pg_advisory_xact_lock_shared(${receiptLock('$1::uuid')})`, [record.id]);
      const forced = await cli('inbox', 'release', '--tenant', 'live', '--claim-token', token, '--force');
      expect({ code: forced.code, lines: forced.lines }).toEqual({
        code: 1,
        lines: [`${record.id} running`],
      });
      expect(await rowOf(record.id)).toMatchObject({ status: 'PROCESSING' });
    } finally {
      await handler.query('ROLLBACK');
      await handler.end();
    }
    const dead = await cli('inbox', 'release', '--tenant', 'live', '--claim-token', token, '--force');
    expect(dead.lines).toEqual([`${record.id} applied`]);
  });
});
