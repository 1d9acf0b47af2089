import { randomUUID } from 'node:crypto';
import { createRelay, emitMany } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

describe('ferry outbox commands', () => {
  let t: TestDatabase;
  const failedA: string[] = [];
  let failedB: string;
  let pendingA: string;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  async function statusOf(id: string): Promise<string | undefined> {
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    return row?.status;
  }

  async function failed(tenants: string[]): Promise<string[]> {
    const { ids } = await emitMany(
      t.db,
      tenants.map((tenantId) => ({ type: 'order.placed', payload: {}, tenantId })),
    );
    const publisher = new InMemoryPublisher({ decide: () => ({ permanent: 'broker said no' }) });
    const relay = createRelay({ db: t.db, publisher, logger: pino({ level: 'silent' }) });
    await relay.runOnce();
    await relay.close();
    for (const id of ids) expect(await statusOf(id)).toBe('FAILED');
    return ids;
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    const ids = await failed(['tenant-a', 'tenant-a', 'tenant-b']);
    failedA.push(ids[0]!, ids[1]!);
    failedB = ids[2]!;
    pendingA = (await emitMany(t.db, [{ type: 'order.shipped', payload: {}, tenantId: 'tenant-a' }])).ids[0]!;
  });
  afterAll(async () => {
    await t.drop();
  });

  it('stats: operator scope sees every tenant, --tenant only its own', async () => {
    const all = await cli('outbox', 'stats');
    expect(all.code).toBe(0);
    expect(all.lines).toEqual(expect.arrayContaining(['FAILED 3', 'PENDING 1', 'SENT 0', 'total 4']));

    const b = await cli('outbox', 'stats', '--tenant', 'tenant-b', '--json');
    expect(b.code).toBe(0);
    expect(JSON.parse(b.lines[0]!)).toMatchObject({
      kind: 'outbox',
      scope: 'tenant:tenant-b',
      counts: { FAILED: 1, PENDING: 0, SENT: 0 },
      total: 1,
    });
  });

  it('list filters by status, tenant, type, key and age, with a cursor', async () => {
    const all = await cli('outbox', 'list', '--status', 'failed');
    expect(all.code).toBe(0);
    expect(all.lines).toHaveLength(3);
    expect(all.lines.join('\n')).toContain('"broker said no"');

    const first = await cli(
      'outbox',
      'list',
      '--status',
      'FAILED',
      '--tenant',
      'tenant-a',
      '--limit',
      '1',
      '--json',
    );
    const page = JSON.parse(first.lines[0]!) as {
      items: Array<{ id: string; tenantId: string }>;
      nextCursor: string;
    };
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.tenantId).toBe('tenant-a');
    const next = await cli(
      'outbox',
      'list',
      '--status=FAILED',
      '--tenant',
      'tenant-a',
      '--limit',
      '1',
      '--cursor',
      page.nextCursor,
    );
    expect(next.lines).toHaveLength(1);
    expect([page.items[0]!.id, next.lines[0]!.split(' ')[0]].sort()).toEqual([...failedA].sort());

    const shipped = await cli('outbox', 'list', '--type', 'order.shipped');
    expect(shipped.lines.map((l) => l.split(' ')[0])).toEqual([pendingA]);
    const old = await cli('outbox', 'list', '--older-than', '1d');
    expect(old.lines).toEqual([]);
  });

  it('show prints one event; an unknown id is FERRY_NOT_FOUND', async () => {
    const shown = await cli('outbox', 'show', failedB, '--json');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.lines[0]!)).toMatchObject({
      item: { id: failedB, status: 'FAILED', tenantId: 'tenant-b' },
    });
    const text = await cli('outbox', 'show', failedB);
    expect(text.lines).toEqual(expect.arrayContaining(['status: "FAILED"', 'lastError: "broker said no"']));
    const hidden = await cli('outbox', 'show', failedB, '--tenant', 'tenant-a');
    expect(hidden.code).toBe(1);
    expect(hidden.errors[0]).toMatch(/^ferry outbox show: FERRY_NOT_FOUND: /);
  });

  it('retry: applied, not_found (missing or another tenant), conflict; exit 1 unless all applied', async () => {
    const missing = randomUUID();
    const isolated = await cli('outbox', 'retry', failedB, missing, '--tenant', 'tenant-a');
    expect(isolated.code).toBe(1);
    expect(isolated.lines).toEqual([`${failedB} not_found`, `${missing} not_found`]);
    expect(await statusOf(failedB)).toBe('FAILED');

    const mixed = await cli('outbox', 'retry', failedA[0]!, pendingA, '--tenant', 'tenant-a');
    expect(mixed.code).toBe(1);
    expect(mixed.lines).toEqual([
      `${failedA[0]} applied`,
      `${pendingA} conflict: expected FAILED, found PENDING`,
    ]);
    expect(mixed.errors.join('\n')).toContain('ferry outbox retry: 1 applied, 1 conflict');
    expect(await statusOf(failedA[0]!)).toBe('PENDING');

    const operator = await cli('outbox', 'retry', failedB, '--json');
    expect(operator.code).toBe(0);
    expect(JSON.parse(operator.lines[0]!)).toEqual({
      action: 'outbox retry',
      dryRun: false,
      results: [{ id: failedB, outcome: 'applied' }],
      counts: { applied: 1 },
    });
    expect(await statusOf(failedB)).toBe('PENDING');
  });

  it('retry by filter in bounded batches: --dry-run shows exactly the ids, then the real run retries them', async () => {
    // A FAILED head blocks its key, so FAILED rows sharing a key are written directly.
    const { ids } = await emitMany(
      t.db,
      ['k1', 'k1', 'k1', 'k2'].map((key) => ({
        type: 'order.placed',
        payload: {},
        tenantId: 'filter',
        orderingKey: key,
      })),
    );
    await t.db.execute(
      `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'x' WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const k1 = ids.slice(0, 3).sort();
    const dry = await cli(
      'outbox',
      'retry',
      '--key',
      'k1',
      '--tenant',
      'filter',
      '--batch-size',
      '2',
      '--dry-run',
    );
    expect(dry.code).toBe(0);
    expect(dry.lines.map((l) => l.split(' ')[0]).sort()).toEqual(k1);
    expect(dry.lines.every((l) => l.endsWith(' applied (dry run)'))).toBe(true);
    for (const id of ids) expect(await statusOf(id)).toBe('FAILED');

    const real = await cli('outbox', 'retry', '--key', 'k1', '--tenant', 'filter', '--batch-size', '2');
    expect(real.code).toBe(0);
    expect(real.lines.map((l) => l.split(' ')[0]).sort()).toEqual(k1);
    for (const id of k1) expect(await statusOf(id)).toBe('PENDING');
    expect(await statusOf(ids[3]!)).toBe('FAILED');

    const neither = await cli('outbox', 'retry', '--tenant', 'filter');
    expect(neither.code).toBe(2);
    const both = await cli('outbox', 'retry', ids[3]!, '--all');
    expect(both.code).toBe(2);
  });

  it('mark-failed: PENDING -> FAILED with the reason, not_found across tenants, --reason required', async () => {
    const fresh = (await emitMany(t.db, [{ type: 'order.shipped', payload: {}, tenantId: 'tenant-a' }]))
      .ids[0]!;
    expect((await cli('outbox', 'mark-failed', fresh)).code).toBe(2);
    const other = await cli('outbox', 'mark-failed', fresh, '--reason', 'poison', '--tenant', 'tenant-b');
    expect(other.code).toBe(1);
    expect(other.lines).toEqual([`${fresh} not_found`]);

    const done = await cli(
      'outbox',
      'mark-failed',
      fresh,
      '--reason',
      'poison message',
      '--tenant',
      'tenant-a',
    );
    expect(done.code).toBe(0);
    expect(done.lines).toEqual([`${fresh} applied`]);
    const [row] = await t.db.query<{ status: string; last_error: string }>(
      'SELECT status, last_error FROM outbox_events WHERE id = $1::uuid',
      [fresh],
    );
    expect(row).toEqual({ status: 'FAILED', last_error: 'poison message' });
  });

  it('release: expired claims of a dead relay go back to PENDING; a live claim only with --force --claim-token', async () => {
    const { ids } = await emitMany(t.db, [
      { type: 'stuck', payload: {}, tenantId: 'rel' },
      { type: 'stuck', payload: {}, tenantId: 'rel' },
    ]);
    const [dead, live] = ids as [string, string];
    const token = randomUUID();
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $3::uuid, claimed_at = now(),
         lease_expires_at = CASE WHEN id = $1::uuid THEN now() - interval '1 minute' ELSE now() + interval '10 minutes' END
       WHERE id = ANY(ARRAY[$1, $2]::uuid[])`,
      [dead, live, token],
    );
    const processing = await cli('outbox', 'list', '--status', 'processing', '--tenant', 'rel');
    expect(processing.lines).toHaveLength(2);
    for (const line of processing.lines) expect(line).toContain(` claim=${token} lease=`);
    const dry = await cli('outbox', 'release', '--tenant', 'rel', '--dry-run');
    expect(dry.lines).toEqual([`${dead} applied (dry run)`]);
    expect(await statusOf(dead)).toBe('PROCESSING');

    const real = await cli('outbox', 'release', '--tenant', 'rel');
    expect(real.code).toBe(0);
    expect(real.lines).toEqual([`${dead} applied`]);
    expect(await statusOf(dead)).toBe('PENDING');
    expect(await statusOf(live)).toBe('PROCESSING');

    expect((await cli('outbox', 'release', '--force')).code).toBe(2);
    const forced = await cli('outbox', 'release', '--tenant', 'rel', '--force', '--claim-token', token);
    expect(forced.lines).toEqual([`${live} applied`]);
    expect(await statusOf(live)).toBe('PENDING');
  });

  it('purge-sent deletes SENT events published before --before, in batches; --dry-run deletes nothing', async () => {
    const { ids } = await emitMany(
      t.db,
      [1, 2, 3].map((n) => ({ type: 'old', payload: { n }, tenantId: 'purge' })),
    );
    await t.db.execute(
      // Created before they were published, as every row is (a tenant's purge relies on it).
      `UPDATE outbox_events SET status = 'SENT', created_at = now() - interval '11 days',
         published_at = now() - interval '10 days' WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const dry = await cli(
      'outbox',
      'purge-sent',
      '--before',
      '7d',
      '--tenant',
      'purge',
      '--dry-run',
      '--json',
    );
    expect(JSON.parse(dry.lines[0]!)).toMatchObject({ dryRun: true, counts: { deleted: 3 } });
    expect(await statusOf(ids[0]!)).toBe('SENT');
    const real = await cli(
      'outbox',
      'purge-sent',
      '--before',
      '7d',
      '--tenant',
      'purge',
      '--batch-size',
      '2',
    );
    expect(real.code).toBe(0);
    expect(real.errors.join('\n')).toContain('ferry outbox purge-sent: 3 deleted');
    for (const id of ids) expect(await statusOf(id)).toBeUndefined();
    expect((await cli('outbox', 'purge-sent')).code).toBe(2);
  });

  it('usage errors exit 2 before touching the database', async () => {
    const cases: string[][] = [
      ['outbox'],
      ['outbox', 'frobnicate'],
      ['outbox', 'list', '--status', 'BROKEN'],
      ['outbox', 'list', '--status', 'FAILED', '--limit', 'ten'],
      ['outbox', 'list', '--status', 'FAILED', '--limit', '0'],
      ['outbox', 'retry'],
      ['outbox', 'mark-failed', pendingA],
      ['outbox', 'stats', '--global'],
      ['outbox', 'stats', '--bogus', 'x'],
      ['outbox', 'stats', 'extra'],
    ];
    for (const argv of cases) {
      const io = captureIo();
      const code = await runCli([...argv, '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io);
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(io.errors.join('\n')).toContain('FERRY_USAGE');
    }
  });

  // Review finding (failed first): an id given twice was reported applied twice.
  it('retry: an id given more than once (any case, any batch) is retried and reported once', async () => {
    const [id] = await failed(['tenant-twice']);
    const twice = await cli('outbox', 'retry', id!, id!.toUpperCase(), id!, '--batch-size', '1');
    expect({ code: twice.code, lines: twice.lines }).toEqual({ code: 0, lines: [`${id} applied`] });
    expect(twice.errors.join('\n')).toContain('ferry outbox retry: 1 applied');
  });

  // Review finding (failed first): a dry run counted at most 10,000 rows as if that were all.
  it('purge-sent --dry-run over more than 10,000 rows says its count is a lower bound', async () => {
    for (let i = 0; i < 11; i += 1) {
      const envelopes = Array.from({ length: i < 10 ? 1_000 : 1 }, () => ({
        type: 'old',
        payload: {},
        tenantId: 'purge-many',
      }));
      await emitMany(t.db, envelopes);
    }
    await t.db.execute(
      `UPDATE outbox_events SET status = 'SENT', created_at = now() - interval '11 days',
         published_at = now() - interval '10 days' WHERE tenant_id = 'purge-many'`,
    );
    const args = ['outbox', 'purge-sent', '--before', '7d', '--tenant', 'purge-many', '--dry-run'];
    const json = await cli(...args, '--json');
    expect(JSON.parse(json.lines[0]!)).toMatchObject({
      dryRun: true,
      counts: { deleted: 10_000 },
      atLeast: true,
    });
    const text = await cli(...args);
    expect(text.errors.join('\n')).toContain('ferry outbox purge-sent: at least 10000 deleted');
  });
});
