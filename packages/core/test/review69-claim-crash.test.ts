/**
 * Review 69: the inbox claim commits with synchronous_commit off (d2a2c64, leaseCommit.ts), and
 * its handler runs before anything durable follows it. The spec (002, worker.maxAttempts: "Claims
 * per retry cycle, including the first attempt and crashes"; "Each claim consumes an attempt
 * before the handler runs") makes maxAttempts the bound on handler runs, crashes included. A
 * PostgreSQL crash while the handler runs forgets the claim: the receipt is PENDING again with
 * the attempt not counted, so a handler whose receipt has maxAttempts 1 runs a second time
 * (its external effects twice), where before the change the receipt stayed PROCESSING under the
 * counted attempt and went DEAD (checked by breaking the guard: CLAIM_SQL without the column passes). The README admits "the inbox attempt that claim
 * counted is not counted" but calls it a claim "nothing durable depended on yet"; the handler
 * already ran under it.
 *
 * The window (the claim's WAL not yet written: up to 3 x wal_writer_delay, the README says) is held
 * open by stopping the WAL writer (SIGSTOP) on a private cluster; the crash is the WAL writer killed
 * (SIGKILL), which PostgreSQL answers as any crashed server process: every backend ends, shared
 * memory (the unwritten WAL with it) is reinitialised, and crash recovery replays what is on disk.
 * A claim that waits for its own flush (before the change) survives it: the backend writes and
 * flushes its commit itself, without the WAL writer.
 */
import { fromPrisma, Inbox, migrate, type InboxHandlerContext } from '@ferry/core';
import pino from 'pino';
import { PrivateCluster, waitUntil } from '../../../fault-tests/harness/privatePostgres';
import type { PrismaClient } from '../../../generated/prisma/client';
import { prismaFor } from '../../../test-support/database';

jest.setTimeout(180_000);

const CONSUMER = 'orders';
let cluster: PrivateCluster | undefined;
let prisma: PrismaClient | undefined;
let inbox: Inbox | undefined;
let walWriter: number | undefined;

afterAll(async () => {
  if (walWriter !== undefined) {
    try {
      process.kill(walWriter, 'SIGCONT');
    } catch {
      // gone already
    }
  }
  await inbox?.close().catch(() => undefined);
  await prisma?.$disconnect().catch(() => undefined);
  await cluster?.destroy();
});

async function walWriterPid(c: PrivateCluster): Promise<number> {
  const [row] = await c.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'",
  );
  if (!row) throw new Error('no walwriter process');
  return Number(row.pid);
}

async function receipt(c: PrivateCluster): Promise<{ status: string; attempts: number } | undefined> {
  const [row] = await c.query<{ status: string; attempts: number }>(
    'SELECT status, attempts FROM ferry_inbox_receipts WHERE message_id = $1',
    ['m-1'],
    'app',
  );
  return row;
}

test('review 69: a PostgreSQL crash while the handler runs does not give a maxAttempts 1 receipt a second run', async () => {
  cluster = await PrivateCluster.create('review69', {
    settings: { autovacuum: 'off', checkpoint_timeout: "'1h'" },
  });
  await cluster.query('CREATE DATABASE app');
  prisma = prismaFor(cluster.url('app'), { max: 4, connectionTimeoutMillis: 2_000 });
  await migrate(fromPrisma(prisma));

  const attemptsSeen: number[] = [];
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  inbox = new Inbox(prisma, {
    logger: pino({ level: 'silent' }),
    handlers: {
      // Its effect is outside PostgreSQL (a payment call, an e-mail): the run itself is the effect.
      [CONSUMER]: async (_payload: unknown, context: InboxHandlerContext) => {
        attemptsSeen.push(context.attempt);
        started();
        await Promise.race([released, new Promise((resolve) => setTimeout(resolve, 60_000))]);
      },
    },
    worker: {
      enabled: false,
      maxAttempts: 1,
      leaseMs: 60_000,
      heartbeatIntervalMs: 20_000,
      transactionTimeoutMs: 30_000,
      shutdownTimeoutMs: 2_000,
    },
  });
  await inbox.initialize();
  await inbox.accept({ consumer: CONSUMER, messageId: 'm-1', tenantId: 'acme', payload: { n: 1 } });

  // The window the README names, held open: the WAL writer does not run.
  walWriter = await walWriterPid(cluster);
  process.kill(walWriter, 'SIGSTOP');
  const first = inbox.runOnce().catch((error: unknown) => error);
  await Promise.race([
    handlerStarted,
    new Promise((_, reject) => setTimeout(() => reject(new Error('handler never started')), 30_000)),
  ]);
  // The claim is committed (visible, the attempt counted) and its handler runs.
  expect(await receipt(cluster)).toEqual({ status: 'PROCESSING', attempts: 1 });

  // PostgreSQL crashes (a server process killed) and recovers.
  const crashed = walWriter;
  process.kill(crashed, 'SIGKILL');
  walWriter = undefined;
  await waitUntil(
    'PostgreSQL back after crash recovery (a new WAL writer)',
    async () => {
      try {
        return (await walWriterPid(cluster!)) !== crashed;
      } catch {
        return false;
      }
    },
    60_000,
    200,
  );
  release();
  await Promise.race([first, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  const afterCrash = await receipt(cluster);

  // The next round: with the claim counted, the receipt's one attempt is spent (DEAD once the
  // failed run was recorded, or PROCESSING until the lease expires), and nothing runs it again.
  await Promise.race([inbox.runOnce().catch(() => undefined), new Promise((r) => setTimeout(r, 30_000))]);
  expect({ afterCrash, handlerRuns: attemptsSeen.length }).toEqual({
    afterCrash: { status: expect.stringMatching(/^(DEAD|PROCESSING)$/), attempts: 1 },
    handlerRuns: 1,
  });
});
