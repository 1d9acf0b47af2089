import { randomUUID } from 'node:crypto';
import type { InboxAcceptInput } from '@ferry/core';
import { createTestDatabase } from '../../../test-support/database';
import { chunks } from '../env';
import { CONSUMER, TENANT, countRows, openInbox, type Tx } from '../inbox';
import { payload } from '../outbox';
import { timed, type Scenario } from '../runner';

const CONCURRENCY = 4;
const INSERT = 'INSERT INTO bench_rows (message_id, amount_cents) VALUES ($1, $2)';

/**
 * Inbox worker completions. Before each run (not timed) `n` receipts are accepted. Subject: the
 * inbox worker (concurrency 4, started with `start()`) runs a handler that inserts one row per
 * message, until all `n` are COMPLETED. Baseline: a plain loop with the same concurrency doing the
 * same insert, each in its own Prisma interactive transaction.
 */
export const workerCompletions: Scenario = {
  name: 'worker-completions',
  unit: 'completions/s',
  better: 'higher',
  baselineLabel: `insert per message in its own transaction, concurrency ${CONCURRENCY}`,
  subjectLabel: `inbox worker, concurrency ${CONCURRENCY}`,
  async open() {
    const database = await createTestDatabase();
    const { prisma } = database;
    await prisma.$executeRawUnsafe(
      'CREATE TABLE bench_rows (message_id text PRIMARY KEY, amount_cents integer NOT NULL)',
    );
    const acceptor = await openInbox(prisma);
    const inputs = (n: number): InboxAcceptInput[] =>
      Array.from({ length: n }, (_, i) => ({
        consumer: CONSUMER,
        messageId: randomUUID(),
        tenantId: TENANT,
        payload: payload(i),
      }));
    const reset = async () => {
      await prisma.$executeRawUnsafe('TRUNCATE bench_rows, ferry_inbox_receipts');
    };

    return {
      async baseline(n) {
        await reset();
        const messages = inputs(n);
        const sample = await timed(async () => {
          let next = 0;
          const lane = async () => {
            while (next < messages.length) {
              const message = messages[next++]!;
              await prisma.$transaction(async (tx) => {
                await tx.$executeRawUnsafe(INSERT, message.messageId, message.payload.amountCents);
              });
            }
          };
          await Promise.all(Array.from({ length: CONCURRENCY }, lane));
          return { ops: n, verified: true };
        });
        return { ...sample, verified: (await countRows(prisma, 'bench_rows')) === n };
      },
      async subject(n) {
        await reset();
        for (const batch of chunks(inputs(n), 500)) await acceptor.acceptMany(batch);
        let completed = 0;
        let resolve!: () => void;
        const done = new Promise<void>((r) => (resolve = r));
        const inbox = await openInbox(prisma, {
          worker: { enabled: false, concurrency: CONCURRENCY, pollIntervalMs: 50 },
          observer: (event) => {
            if (event.type === 'completed' && ++completed >= n) resolve();
          },
          handlers: {
            [CONSUMER]: async (message, context) => {
              await (context.tx as Tx).$executeRawUnsafe(INSERT, context.messageId, message.amountCents);
            },
          },
        });
        try {
          const sample = await timed(async () => {
            inbox.start();
            await done;
            return { ops: completed, verified: true };
          });
          const rows = await countRows(prisma, 'bench_rows');
          const finished = await countRows(prisma, 'ferry_inbox_receipts', "WHERE status = 'COMPLETED'");
          return { ...sample, verified: rows === n && finished === n };
        } finally {
          await inbox.close();
        }
      },
      async close() {
        await acceptor.close();
        await database.drop();
      },
    };
  },
};
