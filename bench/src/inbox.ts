import {
  Inbox,
  type InboxAcceptInput,
  type InboxAcceptor,
  type InboxOptions,
  type TransactionAdapter,
} from '@ferry/core';
import type { PrismaClient } from '../../generated/prisma/client';

export const CONSUMER = 'bench';
export const TENANT = 'bench';

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/**
 * An Inbox on `client` (the Prisma client, or a transaction adapter) with a `bench` handler; the
 * worker stays off unless `options.worker` says so.
 */
export async function openInbox<TTx = Tx>(
  client: PrismaClient | TransactionAdapter<TTx>,
  options: InboxOptions<TTx> = {},
): Promise<Inbox<TTx>> {
  const inbox = new Inbox<TTx>(client, { handlers: { [CONSUMER]: async () => undefined }, ...options });
  await inbox.initialize();
  return inbox;
}

/**
 * Wraps an acceptor so the benchmark learns when `target` deliveries were accepted; the
 * transport acks a batch right after `acceptMany` returns.
 */
export function countingAcceptor(
  inner: InboxAcceptor,
  target: number,
): { acceptor: InboxAcceptor; done: Promise<void> } {
  let accepted = 0;
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  return {
    done,
    acceptor: {
      maxPayloadBytes: inner.maxPayloadBytes,
      async acceptMany(inputs: readonly InboxAcceptInput[]) {
        const results = await inner.acceptMany(inputs);
        accepted += results.filter((result) => result.kind === 'accepted').length;
        if (accepted >= target) resolve();
        return results;
      },
    },
  };
}

export async function countRows(
  prisma: PrismaClient,
  table: 'ferry_inbox_receipts' | 'bench_rows',
  where = '',
): Promise<number> {
  const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM ${table} ${where}`,
  );
  return row?.n ?? 0;
}
