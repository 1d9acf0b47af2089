import { createRelay, emit, fromPrisma, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import type { TestDatabase } from '../../../test-support/database';
import { benchDatabase, positiveInteger } from '../env';
import { EVENT_TYPE, payload } from '../outbox';
import { quantile, type Sample, type Scenario } from '../runner';

const POLL_INTERVAL_MS = 250;
/** Mean gap between emits; each gap is drawn uniformly from 0..2x this, so emits do not phase-lock with the poll. */
const MEAN_GAP_MS = 20;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Emits `n` events one at a time (each its own transaction, a random gap between them) into a
 * running relay and measures, per event, emit commit → the publisher receiving it.
 */
async function measure(database: TestDatabase, wakeUp: boolean, n: number): Promise<Sample> {
  await database.prisma.$executeRawUnsafe('TRUNCATE outbox_events');
  const publishedAt = new Map<string, number>();
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const publisher = new InMemoryPublisher({
    decide: (message) => {
      publishedAt.set(message.id, performance.now());
      if (publishedAt.size >= n) resolve();
      return 'sent';
    },
  });
  const relay: Relay = createRelay({
    db: fromPrisma(database.prisma),
    publisher,
    ...(wakeUp ? { listenUrl: database.url } : {}),
    options: { pollInterval: POLL_INTERVAL_MS },
  });
  relay.start();
  try {
    if (wakeUp) {
      const deadline = Date.now() + 10_000;
      while (relay.listener?.connected !== true && Date.now() < deadline) await sleep(10);
    }
    const committedAt = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < n; i += 1) {
      const { id } = await emit(database.prisma, { type: EVENT_TYPE, payload: payload(i) });
      committedAt.set(id, performance.now());
      await sleep(Math.random() * 2 * MEAN_GAP_MS);
    }
    await all;
    const elapsedMs = performance.now() - started;
    const latencies = [...committedAt].map(([id, at]) => (publishedAt.get(id) ?? Number.NaN) - at);
    const p50 = quantile(latencies, 0.5);
    return {
      value: p50,
      ops: latencies.length,
      elapsedMs,
      verified: latencies.length === n && latencies.every(Number.isFinite),
      extra: { p99: quantile(latencies, 0.99) },
    };
  } finally {
    await relay.close();
  }
}

/**
 * End-to-end latency, emit commit → publish, with the in-memory publisher from @ferry/testing.
 * Subject: wake-up on (`listenUrl` set, LISTEN/NOTIFY). Baseline: polling only, the same
 * pollInterval (250 ms). The unit is milliseconds at p50 (p99 beside it): lower is better.
 */
export const e2eLatency: Scenario = {
  name: 'e2e-latency',
  unit: 'ms p50',
  better: 'lower',
  baselineLabel: `wake-up off (polling every ${POLL_INTERVAL_MS} ms)`,
  subjectLabel: `wake-up on (LISTEN/NOTIFY, same polling)`,
  n: (runN) => Math.min(runN, positiveInteger('BENCH_LATENCY_N', 100)),
  async open() {
    const database = await benchDatabase();
    return {
      baseline: (n) => measure(database, false, n),
      subject: (n) => measure(database, true, n),
      close: () => database.drop(),
    };
  },
};
