/**
 * Review 88 (time): the CLI's listings and records of rows whose times no JavaScript Date holds,
 * failing on main.
 *
 * What I did: an outbox event, an inbox receipt and an audit entry whose created_at / updated_at /
 * completed_at / at SQL set to 'infinity', '-infinity' or 294276 AD (PostgreSQL takes them, a Date
 * ends at 275760 AD), each beside an ordinary one; then `outbox list`, `outbox show`, `inbox list`,
 * `inbox show` and `audit list`, as text and with --json.
 *
 * What happened: the CLI's executor (node-postgres) read them as ±Infinity or an Invalid Date; the
 * text lines call toISOString() on it: a RangeError ("Invalid time value"), the command failed
 * and listed none of the ordinary rows either. --json wrote the time as null.
 *
 * What should happen: every command answers for every row, exit 0; a time beyond a Date's range is
 * written as the nearest end of it (+275760-09-13T00:00:00.000Z, -271821-04-20T00:00:00.000Z).
 */
import type { InboxRecord, OutboxRecord } from '@ferry/core';
import { inboxLine } from '../src/commands/inboxRead';
import { outboxLine } from '../src/commands/outboxRead';
import { useCliDatabase } from './cliDatabase';
import { insertEvent, insertReceipt } from './rows';

jest.setTimeout(60_000);

const database = useCliDatabase();
const { cli } = database;

const LATEST = '+275760-09-13T00:00:00.000Z';
const EARLIEST = '-271821-04-20T00:00:00.000Z';

const ODD_TIMES: Array<[string, string]> = [
  ['infinity', LATEST],
  ['-infinity', EARLIEST],
  ['294276-12-31 23:59:59.999999+00', LATEST],
];

beforeEach(async () => {
  await database.test.db.execute('DELETE FROM outbox_events');
  await database.test.db.execute('DELETE FROM ferry_inbox_receipts');
  await database.test.db.execute('DELETE FROM ferry_operator_audit');
});

describe.each(ODD_TIMES)('a time of %s', (time, written) => {
  it('outbox list and show answer, as text and --json', async () => {
    const odd = await insertEvent(database.test.db);
    const ordinary = await insertEvent(database.test.db);
    await database.test.db.execute(
      `UPDATE outbox_events SET created_at = $2::timestamptz, updated_at = $2::timestamptz WHERE id = $1::uuid`,
      [odd, time],
    );

    const text = await cli('outbox', 'list', '--tenant', 'acme');
    expect({ code: text.code, errors: text.errors }).toEqual({ code: 0, errors: [] });
    expect(text.lines.find((line) => line.startsWith(odd))).toContain(`created=${written}`);
    expect(text.lines.some((line) => line.startsWith(ordinary))).toBe(true);

    const json = await cli('outbox', 'list', '--tenant', 'acme', '--json');
    expect(json.code).toBe(0);
    const items = (JSON.parse(json.lines.join('\n')) as { items: Array<{ id: string; createdAt: string }> })
      .items;
    expect(items.find((item) => item.id === odd)?.createdAt).toBe(written);

    const got = await cli('outbox', 'show', odd, '--tenant', 'acme');
    expect({ code: got.code, errors: got.errors }).toEqual({ code: 0, errors: [] });
    expect(got.lines).toContain(`createdAt: ${written}`);
    expect(got.lines).toContain(`updatedAt: ${written}`);
    const gotJson = await cli('outbox', 'show', odd, '--tenant', 'acme', '--json');
    expect((JSON.parse(gotJson.lines.join('\n')) as { item: { createdAt: string } }).item.createdAt).toBe(
      written,
    );
  });

  it('inbox list and show answer, as text and --json', async () => {
    const odd = await insertReceipt(database.test.db);
    const ordinary = await insertReceipt(database.test.db);
    await database.test.db.execute(
      `UPDATE ferry_inbox_receipts SET created_at = $2::timestamptz, completed_at = $2::timestamptz
         WHERE id = $1::uuid`,
      [odd.id, time],
    );

    const text = await cli('inbox', 'list', '--tenant', 'acme');
    expect({ code: text.code, errors: text.errors }).toEqual({ code: 0, errors: [] });
    expect(text.lines.find((line) => line.startsWith(odd.id))).toContain(`created=${written}`);
    expect(text.lines.some((line) => line.startsWith(ordinary.id))).toBe(true);

    const json = await cli('inbox', 'list', '--tenant', 'acme', '--json');
    expect(json.code).toBe(0);
    const items = (JSON.parse(json.lines.join('\n')) as { items: Array<{ id: string; createdAt: string }> })
      .items;
    expect(items.find((item) => item.id === odd.id)?.createdAt).toBe(written);

    const got = await cli('inbox', 'show', odd.id, '--tenant', 'acme');
    expect({ code: got.code, errors: got.errors }).toEqual({ code: 0, errors: [] });
    expect(got.lines).toContain(`completedAt: ${written}`);
    const gotJson = await cli('inbox', 'show', odd.id, '--tenant', 'acme', '--json');
    expect((JSON.parse(gotJson.lines.join('\n')) as { item: { completedAt: string } }).item.completedAt).toBe(
      written,
    );
  });

  it('audit list answers, as text and --json', async () => {
    await database.test.db.execute(
      `INSERT INTO ferry_operator_audit (at, actor, action, scope, outcome)
       VALUES ($1::timestamptz, 'ops@test', 'outbox.retry', 'tenant:acme', 'applied'),
              (now(), 'ops@test', 'outbox.retry', 'tenant:acme', 'applied')`,
      [time],
    );
    const text = await cli('audit', 'list');
    expect({ code: text.code, errors: text.errors }).toEqual({ code: 0, errors: [] });
    expect(text.lines).toHaveLength(2);
    expect(text.lines.filter((line) => line.includes(` ${written} `))).toHaveLength(1);

    const json = await cli('audit', 'list', '--json');
    expect(json.code).toBe(0);
    const items = (JSON.parse(json.lines.join('\n')) as { items: Array<{ at: string }> }).items;
    expect(items.map((item) => item.at)).toContain(written);
  });
});

describe('the text of a Date that is none the less invalid (a record from elsewhere than the core)', () => {
  it('is written `invalid` in a listing line, never a RangeError', () => {
    const invalid = new Date(Number.NaN);
    const record = {
      id: 'e1',
      status: 'PROCESSING',
      type: 't',
      tenantId: null,
      orderingKey: null,
      retryCount: 0,
      maxRetries: 5,
      createdAt: invalid,
      lastError: null,
      claimToken: 'c1',
      leaseExpiresAt: invalid,
    } as unknown as OutboxRecord;
    expect(outboxLine(record)).toContain('created=invalid');
    expect(outboxLine(record)).toContain('lease=invalid');
    expect(
      inboxLine({
        ...record,
        rowVersion: 1,
        consumer: 'w',
        messageId: 'm',
        attempts: 0,
        maxAttempts: 5,
      } as unknown as InboxRecord),
    ).toContain('created=invalid');
  });
});

describe.each(ODD_TIMES)('the oldest unfinished row created at %s', (time) => {
  it('outbox stats and inbox stats --json give its age as a number (null is "none pending")', async () => {
    const event = await insertEvent(database.test.db);
    const receipt = await insertReceipt(database.test.db, { status: 'DEAD' });
    await database.test.db.execute(
      `UPDATE outbox_events SET created_at = $2::timestamptz WHERE id = $1::uuid`,
      [event, time],
    );
    await database.test.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'PENDING', dead_at = NULL, created_at = $2::timestamptz
         WHERE id = $1::uuid`,
      [receipt.id, time],
    );
    for (const kind of ['outbox', 'inbox']) {
      const stats = await cli(kind, 'stats', '--tenant', 'acme', '--json');
      expect({ kind, code: stats.code, errors: stats.errors }).toEqual({ kind, code: 0, errors: [] });
      const answer = JSON.parse(stats.lines.join('\n')) as { oldestPendingAgeMs: unknown };
      expect({ kind, age: typeof answer.oldestPendingAgeMs }).toEqual({ kind, age: 'number' });
      const text = await cli(kind, 'stats', '--tenant', 'acme');
      const line = text.lines.find((l) => l.startsWith('oldestPendingAgeMs '));
      expect({ kind, finite: Number.isFinite(Number(line?.split(' ')[1])) }).toEqual({ kind, finite: true });
    }
  });
});
