/**
 * Review 97 (held): an operator scoped to tenant `other` reaches none of tenant `acme`'s rows, by id
 * (show, requeue, replay, retry, mark-failed), nor by a cursor `acme`'s listing printed; and a
 * receipt's hostile bytes (an ANSI escape, an OSC title, a C1 CSI) drive no terminal in text or
 * --json output. Regression guards; every row is checked unchanged afterwards.
 */
import { emitMany } from '@ferry/core';
import { useCliDatabase } from './cliDatabase';
import { insertReceipt } from './rows';

const database = useCliDatabase();
const cli = database.cli;

async function statusOf(table: 'ferry_inbox_receipts' | 'outbox_events', id: string): Promise<string> {
  const [row] = await database.test.db.query<{ status: string }>(
    `SELECT status FROM ${table} WHERE id = $1::uuid`,
    [id],
  );
  return row?.status ?? 'missing';
}

describe('review97: tenant other reaches none of acme rows', () => {
  it('by id: show, requeue, replay, outbox retry and mark-failed answer not found; nothing changes', async () => {
    const dead = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const done = await insertReceipt(database.test.db, { status: 'COMPLETED', version: 2 });
    const { ids } = await emitMany(database.test.db, [
      { type: 'order.placed', payload: {}, tenantId: 'acme' },
      { type: 'order.placed', payload: {}, tenantId: 'acme' },
    ]);
    const [pending, failed] = ids as [string, string];
    await database.test.db.execute(
      `UPDATE outbox_events SET status = 'FAILED', failed_at = now() WHERE id = $1::uuid`,
      [failed],
    );
    const scope = ['--tenant', 'other'];
    const answers = [
      await cli('inbox', 'show', dead.id, ...scope),
      await cli('inbox', 'requeue', `${dead.id}:3`, ...scope, '--reason', 'r'),
      await cli(
        'inbox',
        'replay',
        done.id,
        '--expected-version',
        '2',
        '--target-consumer',
        'work',
        ...scope,
        '--reason',
        'r',
      ),
      await cli('outbox', 'show', failed, ...scope),
      await cli('outbox', 'retry', failed, ...scope),
      await cli('outbox', 'mark-failed', pending, ...scope, '--reason', 'r'),
    ];
    expect(answers.map((a) => a.code)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(answers[1]!.lines).toEqual([`${dead.id} not_found`]);
    expect(answers[4]!.lines).toEqual([`${failed} not_found`]);
    expect(answers[5]!.lines).toEqual([`${pending} not_found`]);
    expect(answers[2]!.errors[0]).toMatch(/FERRY_NOT_FOUND/);
    const statuses = [
      await statusOf('ferry_inbox_receipts', dead.id),
      await statusOf('ferry_inbox_receipts', done.id),
      await statusOf('outbox_events', failed),
      await statusOf('outbox_events', pending),
    ];
    expect(statuses).toEqual(['DEAD', 'COMPLETED', 'FAILED', 'PENDING']);
    const [replays] = await database.test.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE replay_source_id IS NOT NULL',
    );
    expect(replays!.n).toBe(0);
  });

  it("by cursor: acme's printed cursor is refused for other (and for acme with another filter)", async () => {
    for (let i = 0; i < 3; i += 1) await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const first = await cli('inbox', 'list', '--tenant', 'acme', '--limit', '1');
    const cursor = /--cursor (\S+)/.exec(first.errors.join('\n'))?.[1];
    expect(cursor).toBeDefined();
    const other = await cli('inbox', 'list', '--tenant', 'other', '--cursor', cursor as string);
    const global = await cli('inbox', 'list', '--global', '--cursor', cursor as string);
    const filtered = await cli('inbox', 'list', '--tenant', 'acme', '--status', 'DEAD', '--cursor', cursor!);
    for (const refused of [other, global, filtered]) {
      expect(refused.code).toBe(2);
      expect(refused.lines).toEqual([]);
      expect(refused.errors[0]).toMatch(/--cursor was issued for another scope or other filters/);
    }
  });
});

describe('review97: hostile bytes of a stored receipt', () => {
  it('drive no terminal in text or --json output, and --json reads back the same values', async () => {
    const [row] = await database.test.db.query<{ id: string }>(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
         payload_bytes, headers, status, attempts, max_attempts, row_version, dead_at, last_error)
       VALUES ('hostile', E'work\\x1b[31m', 'm', jsonb_build_object(E'k\\x7f\\u2028', E'v\\u009b2J'),
         'fp', 2, '{}', 'DEAD', 1, 5, 3, now(), E'err\\x1b]0;owned\\x07')
       RETURNING id::text`,
    );
    const text = await cli('inbox', 'list', '--tenant', 'hostile');
    const json = await cli('inbox', 'show', row!.id, '--tenant', 'hostile', '--json');
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    const terminal = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
    for (const line of [...text.lines, ...text.errors, ...json.lines]) expect(line).not.toMatch(terminal);
    expect(text.lines[0]).toContain('consumer="work\\u001b[31m"');
    const item = (JSON.parse(json.lines[0]!) as { item: Record<string, unknown> }).item;
    expect(item.consumer).toBe('work\u001b[31m');
    expect(item.lastError).toBe('err\u001b]0;owned\u0007');
    expect(item.payload).toEqual({ 'k\u007f\u2028': 'v\u009b2J' });
  });
});
