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
    const code = await runCli([...argv, '--database-url', t.url], io);
    return { code, ...io };
  }

  async function statusOf(id: string): Promise<string | undefined> {
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    return row?.status;
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    const failing = await emitMany(t.db, [
      { type: 'order.placed', payload: { n: 1 }, tenantId: 'tenant-a' },
      { type: 'order.placed', payload: { n: 2 }, tenantId: 'tenant-a' },
      { type: 'order.placed', payload: { n: 3 }, tenantId: 'tenant-b' },
    ]);
    const publisher = new InMemoryPublisher({ decide: () => ({ permanent: 'broker said no' }) });
    const relay = createRelay({ db: t.db, publisher, logger: pino({ level: 'silent' }) });
    await relay.runOnce();
    await relay.close();
    failedA.push(failing.ids[0]!, failing.ids[1]!);
    failedB = failing.ids[2]!;
    for (const id of failing.ids) expect(await statusOf(id)).toBe('FAILED');
    pendingA = (await emitMany(t.db, [{ type: 'order.shipped', payload: {}, tenantId: 'tenant-a' }])).ids[0]!;
  });
  afterAll(async () => {
    await t.drop();
  });

  it('stats: operator scope sees every tenant, --tenant only its own', async () => {
    const all = await cli('outbox', 'stats');
    expect(all.code).toBe(0);
    expect(all.lines).toEqual(expect.arrayContaining(['failed 3', 'pending 1', 'sent 0']));

    const b = await cli('outbox', 'stats', '--tenant', 'tenant-b', '--json');
    expect(b.code).toBe(0);
    expect(JSON.parse(b.lines[0]!)).toMatchObject({ failed: 1, pending: 0, sent: 0 });
  });

  it('list --status FAILED, per tenant, with a cursor', async () => {
    const all = await cli('outbox', 'list', '--status', 'FAILED');
    expect(all.code).toBe(0);
    expect(all.lines).toHaveLength(3);
    expect(all.lines.join('\n')).toContain('"broker said no"');

    const a = await cli(
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
    expect(a.code).toBe(0);
    const first = JSON.parse(a.lines[0]!) as {
      items: Array<{ id: string; tenantId: string }>;
      nextCursor: string;
    };
    expect(first.items).toHaveLength(1);
    expect(first.items[0]!.tenantId).toBe('tenant-a');
    const next = await cli(
      'outbox',
      'list',
      '--status=FAILED',
      '--tenant',
      'tenant-a',
      '--limit',
      '1',
      '--cursor',
      first.nextCursor,
    );
    expect(next.code).toBe(0);
    expect(next.lines).toHaveLength(1);
    const seen = [first.items[0]!.id, next.lines[0]!.split(' ')[0]];
    expect(seen.sort()).toEqual([...failedA].sort());
    expect(next.lines[0]).toMatch(/ FAILED order\.placed tenant=tenant-a /);
  });

  it('retry: applied, not_found (missing or another tenant), conflict; exit 1 unless all applied', async () => {
    const missing = randomUUID();
    const isolated = await cli('outbox', 'retry', failedB, missing, '--tenant', 'tenant-a');
    expect(isolated.code).toBe(1);
    expect(isolated.lines).toEqual([`${failedB} not_found`, `${missing} not_found`]);
    expect(await statusOf(failedB)).toBe('FAILED');

    const mixed = await cli('outbox', 'retry', failedA[0]!, pendingA, '--tenant', 'tenant-a');
    expect(mixed.code).toBe(1);
    expect(mixed.lines).toEqual([`${failedA[0]} applied`, `${pendingA} conflict`]);
    expect(mixed.errors.join('\n')).toContain('1 of 2 not applied');
    expect(await statusOf(failedA[0]!)).toBe('PENDING');

    const operator = await cli('outbox', 'retry', failedB, '--json');
    expect(operator.code).toBe(0);
    expect(JSON.parse(operator.lines[0]!)).toEqual([{ id: failedB, outcome: 'applied' }]);
    expect(await statusOf(failedB)).toBe('PENDING');
  });

  it('mark-failed: PENDING -> FAILED with the reason, not_found across tenants', async () => {
    const other = await cli('outbox', 'mark-failed', pendingA, '--reason', 'poison', '--tenant', 'tenant-b');
    expect(other.code).toBe(1);
    expect(other.lines).toEqual([`${pendingA} not_found`]);

    const done = await cli(
      'outbox',
      'mark-failed',
      pendingA,
      '--reason',
      'poison message',
      '--tenant',
      'tenant-a',
    );
    expect(done.code).toBe(0);
    expect(done.lines).toEqual([`${pendingA} applied`]);
    const [row] = await t.db.query<{ status: string; last_error: string }>(
      'SELECT status, last_error FROM outbox_events WHERE id = $1::uuid',
      [pendingA],
    );
    expect(row).toEqual({ status: 'FAILED', last_error: 'poison message' });
  });

  it('usage errors exit 2 before touching the database', async () => {
    const cases: string[][] = [
      ['outbox'],
      ['outbox', 'frobnicate'],
      ['outbox', 'list'],
      ['outbox', 'list', '--status', 'BROKEN'],
      ['outbox', 'list', '--status', 'FAILED', '--limit', 'ten'],
      ['outbox', 'retry'],
      ['outbox', 'mark-failed', pendingA],
      ['outbox', 'mark-failed', pendingA, failedB, '--reason', 'x'],
      ['outbox', 'stats', '--global'],
      ['outbox', 'stats', '--bogus', 'x'],
    ];
    for (const argv of cases) {
      const io = captureIo();
      const code = await runCli([...argv, '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io);
      expect({ argv, code }).toEqual({ argv, code: 2 });
      expect(io.errors.join('\n')).toContain('usage: ferry');
    }
  });

  it('a core validation error exits 1 with its code', async () => {
    const result = await cli('outbox', 'list', '--status', 'FAILED', '--limit', '0');
    expect(result.code).toBe(1);
    expect(result.errors.join('\n')).toContain('FERRY_VALIDATION_FAILED');
  });
});
