import { emitMany } from '@ferry/core';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

// Review finding (failed first): list cursors are bound to their filters (listCursor.ts), and the CLI turns a relative
// age (--older-than 7d, --since 24h) into an instant at each invocation: the cursor a page prints
// ("more rows: --cursor X") is refused by the very command it tells the operator to run next.
describe('paging a list filtered by a relative age', () => {
  let t: TestDatabase;

  async function cli(...argv: string[]) {
    const io = captureIo();
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    return { code, ...io };
  }

  /** The next millisecond: a later invocation computes a later instant from the same age. */
  async function nextMillisecond(): Promise<void> {
    const start = Date.now();
    const deadline = start + 5_000;
    while (Date.now() === start && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  }

  function cursorOf(errors: string[]): string {
    const line = errors.find((e) => e.includes('--cursor '));
    expect(line).toBeDefined();
    return line!.split('--cursor ')[1]!.trim();
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    const { ids } = await emitMany(
      t.db,
      [1, 2, 3].map((n) => ({ type: 'order.placed', payload: { n }, tenantId: 'age' })),
    );
    for (const id of ids) {
      // One audit row each.
      expect((await cli('outbox', 'mark-failed', id, '--reason', 'probe', '--dry-run')).code).toBe(0);
    }
  });
  afterAll(async () => {
    await t.drop();
  });

  it('Review finding (failed first): outbox list --older-than: the printed cursor continues the listing', async () => {
    const first = await cli('outbox', 'list', '--older-than', '0s', '--limit', '1');
    expect(first.code).toBe(0);
    const cursor = cursorOf(first.errors);
    await nextMillisecond();
    const next = await cli('outbox', 'list', '--older-than', '0s', '--limit', '1', '--cursor', cursor);
    expect({
      code: next.code,
      rows: next.lines.length,
      errors: next.errors.filter((e) => !e.includes('--cursor')),
    }).toEqual({ code: 0, rows: 1, errors: [] });
  });

  it('Review finding (failed first): audit list --since: the printed cursor continues the listing', async () => {
    const first = await cli('audit', 'list', '--since', '1h', '--limit', '1');
    expect(first.code).toBe(0);
    const cursor = cursorOf(first.errors);
    await nextMillisecond();
    const next = await cli('audit', 'list', '--since', '1h', '--limit', '1', '--cursor', cursor);
    expect({
      code: next.code,
      rows: next.lines.length,
      errors: next.errors.filter((e) => !e.includes('--cursor')),
    }).toEqual({ code: 0, rows: 1, errors: [] });
  });
});
