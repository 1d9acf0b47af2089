/**
 * Review 100: the reader of standard error is gone (`ferry … 2>&1 | head -1`, a log shipper that
 * died, a supervisor that closed the pipe). Standard output's EPIPE was handled (review 97), but
 * process.stderr had no 'error' listener: the first note, summary or error line written there
 * crashed the binary with an uncaught EPIPE, exit 1 whatever the answer (a usage error is 2, a
 * requeue applied in full 0, an interrupted one 130), and a signal's "stopping" note killed a
 * command with its change in flight. The real binary against a real database; the test closes the
 * pipes before the command writes.
 */
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runBinary, type BinaryRun } from './binary';
import { useCliDatabase } from './cliDatabase';
import { BOUND_MS, holding, someoneWaitsOnALock } from './interrupting';
import { insertReceipt } from './rows';

jest.setTimeout(60_000);

const database = useCliDatabase();

/** `ferry argv…` with the pipes `closed` names closed by their reader before the command writes. */
function closing(argv: readonly string[], closed: readonly ('stdout' | 'stderr')[]): BinaryRun {
  const run = runBinary(argv);
  for (const stream of closed) run.child[stream]?.destroy();
  return run;
}

async function receiptStatus(id: string): Promise<string> {
  const [row] = await database.test.db.query<{ status: string }>(
    'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.status ?? 'missing';
}

/** True once `file` exists, false after BOUND_MS. */
async function appears(file: string): Promise<boolean> {
  for (const stop = Date.now() + BOUND_MS; Date.now() < stop;) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

function requeue(ids: readonly string[]): string[] {
  return [
    'inbox',
    'requeue',
    ...ids,
    '--tenant',
    'acme',
    '--reason',
    'fixed',
    '--database-url',
    database.test.url,
  ];
}

describe('review100: a command whose stderr reader is gone exits with its own code', () => {
  it('a usage error is still exit 2', async () => {
    const run = closing(['frobnicate'], ['stderr']);
    expect(await run.ended(BOUND_MS)).toEqual({ code: 2, signal: null, hung: false });
  });

  it('a requeue applied in full (summary on stderr) is exit 0, its line on stdout', async () => {
    const receipt = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const run = closing(requeue([`${receipt.id}:3`]), ['stderr']);
    expect(await run.ended(BOUND_MS)).toEqual({ code: 0, signal: null, hung: false });
    expect(run.stdout()).toEqual([`${receipt.id} applied`]);
    expect(await receiptStatus(receipt.id)).toBe('PENDING');
  });

  it('both readers gone (`2>&1 | head -1`): a conflict is exit 1, a success exit 0', async () => {
    const stale = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const conflict = closing(requeue([`${stale.id}:2`]), ['stdout', 'stderr']);
    expect(await conflict.ended(BOUND_MS)).toEqual({ code: 1, signal: null, hung: false });
    const fresh = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const applied = closing(requeue([`${fresh.id}:3`]), ['stdout', 'stderr']);
    expect(await applied.ended(BOUND_MS)).toEqual({ code: 0, signal: null, hung: false });
    expect(await receiptStatus(fresh.id)).toBe('PENDING');
  });

  it('SIGINT with its change in flight: the change finishes, the next is not attempted, exit 130', async () => {
    const first = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const second = await insertReceipt(database.test.db, { status: 'DEAD', version: 3 });
    const lock = await holding(
      database.test,
      'SELECT 1 FROM ferry_inbox_receipts WHERE id = $1::uuid FOR UPDATE',
      [first.id],
    );
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-review100-'));
    const marker = path.join(dir, 'signalled');
    // Only observes: the child notes that SIGINT reached it (its "stopping" note goes to the closed stderr).
    const observer = path.join(dir, 'observer.js');
    await writeFile(
      observer,
      `process.on('SIGINT', () => require('node:fs').writeFileSync(${JSON.stringify(marker)}, ''));\n`,
    );
    try {
      const run = runBinary(requeue([`${first.id}:3`, `${second.id}:3`]), ['--require', observer]);
      run.child.stderr?.destroy();
      expect(await someoneWaitsOnALock(database.test)).toBe(true);
      run.child.kill('SIGINT');
      expect(await appears(marker)).toBe(true);
      await lock.release();
      expect(await run.ended(BOUND_MS)).toEqual({ code: 130, signal: null, hung: false });
      expect(run.stdout()).toEqual([`${first.id} applied`, `${second.id} not_attempted`]);
      expect(await receiptStatus(first.id)).toBe('PENDING');
      expect(await receiptStatus(second.id)).toBe('DEAD');
    } finally {
      await lock.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
