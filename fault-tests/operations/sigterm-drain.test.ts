/**
 * Scenario: SIGTERM drain of a real worker process with stalled handlers.
 *
 * Breaks: a child `node` process runs the inbox worker (fixtures/stallingWorker.ts). Two of its
 * handlers stall inside their transaction after their business write: one waits for its abort
 * signal, the other ignores it and never returns. The suite sends SIGTERM.
 *
 * Invariant: the process drains — stops claiming, waits at most shutdownTimeoutMs (1.5 s), then
 * interrupts the stalled handlers — and exits 0 on its own within a generous deadline; neither
 * stalled business write is ever visible (both transactions rolled back, no session of the child
 * stays open); a new worker process recovers both interrupted receipts once their lease (3 s)
 * expires and completes them exactly once. Ledger: lost = 0, appliedTwice = 0, stuck = 0.
 */
import { Inbox } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';
import { assertLedger } from '../harness/ledger';
import { startFixture, stopChild, type RunningChild } from './childProcess';
import {
  countStatus,
  createBusinessTable,
  deliverUntilAcknowledged,
  inboxLedger,
  inputs,
  newOffering,
  quietLogger,
  waitFor,
  waitUntilSettled,
} from './support';

const STALLED = ['st-cooperative', 'st-ignoring'];
const OTHERS = 28;

describe('operations: sigterm-drain', () => {
  let t: TestDatabase;
  const children: RunningChild[] = [];
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    for (const child of children) await stopChild(child);
    await t?.drop();
  });

  async function sessionsInTransaction(): Promise<number> {
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
    );
    return Number(row?.n ?? 0);
  }

  it('drains on SIGTERM, rolls back the stalled handlers and a new process completes them once', async () => {
    const offering = newOffering();
    const batch = [
      ...STALLED.map((messageId) => ({
        consumer: 'orders',
        messageId,
        tenantId: 'acme',
        payload: { stall: true },
      })),
      ...inputs('sd', OTHERS),
    ];
    const acceptor = new Inbox(t.prisma, {
      logger: quietLogger,
      handlers: { orders: async () => undefined },
    });
    await deliverUntilAcknowledged(acceptor, batch, offering);

    // First process: handles everything, two handlers stall.
    // The URL through the environment, not the command line (`ps` shows a password there).
    const first = startFixture('stallingWorker.ts', [], {
      FERRY_FAULT_DATABASE_URL: t.url,
      FERRY_FAULT_STALL: '1',
    });
    children.push(first);
    for (const id of STALLED) await first.waitForLine(`STALLED ${id}`, (line) => line === `STALLED ${id}`);
    await waitFor('the other messages completed', async () => (await countStatus(t, 'COMPLETED')) === OTHERS);
    expect(await sessionsInTransaction()).toBeGreaterThanOrEqual(2); // the stalled transactions are open

    first.process.kill('SIGTERM');
    const exit = await waitFor('the first process to exit after SIGTERM', () =>
      first.hasExited() ? first.exited : undefined,
    );
    expect(exit).toEqual({ code: 0, signal: null });
    expect(first.lines).toContain('DRAINED');
    const exitLine = first.lines.find((line) => line.startsWith('EXIT '));
    expect(exitLine).toBeDefined();

    // Both stalled transactions rolled back: no open session, no business row, not completed.
    await waitFor(
      'no session of the first process left in a transaction',
      async () => (await sessionsInTransaction()) === 0,
    );
    const stalled = await t.db.query<{ message_id: string; status: string; rows: number }>(
      `SELECT r.message_id, r.status,
              (SELECT count(*)::int FROM business_rows b WHERE b.message_id = r.message_id) AS rows
         FROM ferry_inbox_receipts r WHERE r.message_id = ANY($1::text[]) ORDER BY r.message_id`,
      [STALLED],
    );
    expect(stalled).toHaveLength(2);
    for (const row of stalled) {
      expect(row.rows).toBe(0);
      expect(row.status).not.toBe('COMPLETED');
    }

    // Second process: recovers the interrupted receipts after their lease and completes them.
    const second = startFixture('stallingWorker.ts', [], { FERRY_FAULT_DATABASE_URL: t.url });
    children.push(second);
    await second.waitForLine('the second process ready', (line) => line === 'READY');
    await waitUntilSettled(t);
    second.process.kill('SIGTERM');
    expect(
      await waitFor('the second process to exit', () => (second.hasExited() ? second.exited : undefined)),
    ).toEqual({
      code: 0,
      signal: null,
    });
    for (const id of STALLED) expect(second.lines).toContain(`COMPLETED ${id}`);

    const recovered = await t.db.query<{ status: string; lifetime_attempts: number }>(
      'SELECT status, lifetime_attempts FROM ferry_inbox_receipts WHERE message_id = ANY($1::text[])',
      [STALLED],
    );
    expect(recovered).toEqual([
      { status: 'COMPLETED', lifetime_attempts: 2 },
      { status: 'COMPLETED', lifetime_attempts: 2 },
    ]);
    const ledger = await inboxLedger(
      t,
      batch.map((input) => input.messageId),
      offering,
    );
    process.stdout.write(
      `sigterm-drain: first process ${exitLine} (${first.lines.filter((l) => l.startsWith('COMPLETED')).length} completed)\n`,
    );
    assertLedger('sigterm-drain', ledger);
    expect(ledger.accepted).toBe(OTHERS + STALLED.length);
    expect(ledger.effectsApplied).toBe(OTHERS + STALLED.length);
  }, 400_000);
});
