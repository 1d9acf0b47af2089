import { createRelay, fromPrisma, type OutboxObserver, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import type { PrismaClient } from '../../../generated/prisma/client';
import { BATCH_SIZE } from '../env';
import { OutboxBench, waitUntil } from '../outbox';
import { timed, type Scenario } from '../runner';

/** Relays drain `n` events together; every relay has its own Prisma client (pool of 4). */
async function drainWith(bench: OutboxBench, clients: readonly PrismaClient[], n: number) {
  await bench.backlog(n, 'bench');
  const publishers = clients.map(() => new InMemoryPublisher());
  let total = 0;
  const sample = await timed(async () => {
    const count: OutboxObserver = (event) => void (event.type === 'sent' && (total += 1));
    const relays: Relay[] = clients.map((client, i) =>
      createRelay({
        db: fromPrisma(client),
        publisher: publishers[i]!,
        options: { batchSize: BATCH_SIZE },
        observer: count,
      }),
    );
    relays.forEach((relay) => relay.start());
    try {
      await waitUntil(() => total >= n);
    } finally {
      await Promise.all(relays.map((relay) => relay.close()));
    }
    return { ops: total, verified: true };
  });
  const delivered = publishers.reduce((total, publisher) => total + publisher.delivered.length, 0);
  return { ...sample, verified: sample.ops === n && delivered === n && (await bench.allSent(n)) };
}

/**
 * Relay scaling: `relays` relays vs 1 relay on the same backlog of `n` events, with the
 * in-memory publisher (so the figure is ferry's claim/complete path on PostgreSQL). The relays
 * run in this one process, each with its own connection pool; separate processes would add CPU
 * contention on the same 2 cores rather than remove it.
 */
export function relayScaling(relays: number): Scenario {
  return {
    name: `relay-scaling-x${relays}`,
    unit: 'events/s',
    better: 'higher',
    baselineLabel: '1 relay, in-memory publisher',
    subjectLabel: `${relays} relays in one process, in-memory publisher`,
    async open() {
      const bench = await OutboxBench.open();
      const clients = Array.from({ length: relays }, () => bench.database.newClient({ max: 4 }));
      return {
        baseline: (n) => drainWith(bench, clients.slice(0, 1), n),
        subject: (n) => drainWith(bench, clients, n),
        close: () => bench.close(),
      };
    },
  };
}
