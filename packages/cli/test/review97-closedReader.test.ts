/**
 * Review 97: the reader of standard output is gone (`ferry inbox requeue … | head -1`, a pager quit
 * early, a log shipper that died) when a mutation answers. The exit code is still the answer's: a
 * requeue or mark-failed whose outcomes include a conflict exits 1 (README: exit 1 unless every
 * outcome is a success), as it does with its output read to the end; a script under `set -o
 * pipefail` must not read a refused change as done. `top` still ends when its reader is gone.
 * The real binary against a real database; the test closes the pipe before the command writes.
 */
import { emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { runBinary, type BinaryRun } from './binary';
import { insertReceipt } from './rows';

jest.setTimeout(60_000);

const BOUND_MS = 20_000;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** `ferry argv…` whose standard output nobody reads: the pipe is closed before it writes. */
function unread(argv: readonly string[]): BinaryRun {
  const run = runBinary([...argv, '--database-url', t.url]);
  run.child.stdout?.destroy();
  return run;
}

async function statusOf(table: 'ferry_inbox_receipts' | 'outbox_events', id: string): Promise<string> {
  const [row] = await t.db.query<{ status: string }>(`SELECT status FROM ${table} WHERE id = $1::uuid`, [id]);
  return row?.status ?? 'missing';
}

describe('review97: a mutation whose stdout reader is gone exits with its answer', () => {
  it('inbox requeue: a conflict (a stale version) is exit 1, the applied one is applied', async () => {
    const stale = await insertReceipt(t.db, { status: 'DEAD', version: 3 });
    const fresh = await insertReceipt(t.db, { status: 'DEAD', version: 3 });
    const run = unread([
      'inbox',
      'requeue',
      `${fresh.id}:3`,
      `${stale.id}:2`,
      '--tenant',
      'acme',
      '--reason',
      'handler fixed',
    ]);
    const ended = await run.ended(BOUND_MS);
    expect(ended).toEqual({ code: 1, signal: null, hung: false });
    expect(run.stderr().at(-1)).toBe('ferry inbox requeue: 1 applied, 1 conflict');
    expect(await statusOf('ferry_inbox_receipts', fresh.id)).toBe('PENDING');
    expect(await statusOf('ferry_inbox_receipts', stale.id)).toBe('DEAD');
  });

  it('outbox mark-failed --json: an event no longer PENDING is a conflict, exit 1', async () => {
    const { ids } = await emitMany(t.db, [{ type: 'order.placed', payload: {}, tenantId: 'acme' }]);
    const id = ids[0] as string;
    await t.db.execute(`UPDATE outbox_events SET status = 'SENT', published_at = now() WHERE id = $1::uuid`, [
      id,
    ]);
    const run = unread(['outbox', 'mark-failed', id, '--reason', 'broker lost it', '--json']);
    const ended = await run.ended(BOUND_MS);
    expect(ended).toEqual({ code: 1, signal: null, hung: false });
    expect(await statusOf('outbox_events', id)).toBe('SENT');
  });

  it('every outcome a success is still exit 0', async () => {
    const receipt = await insertReceipt(t.db, { status: 'DEAD', version: 3 });
    const run = unread(['inbox', 'requeue', `${receipt.id}:3`, '--tenant', 'acme', '--reason', 'fixed']);
    expect(await run.ended(BOUND_MS)).toEqual({ code: 0, signal: null, hung: false });
    expect(await statusOf('ferry_inbox_receipts', receipt.id)).toBe('PENDING');
  });
});

describe('review97: top whose reader is gone', () => {
  it('stops refreshing and exits 0, without waiting out its interval', async () => {
    const run = unread(['top', '--interval', '1h']);
    expect(await run.ended(BOUND_MS)).toEqual({ code: 0, signal: null, hung: false });
  });
});
