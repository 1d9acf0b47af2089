import { createRelay, type OutboxMessage, type OutboxObserver, type Publisher } from '@ferry/core';
import { BATCH_SIZE, chunks, SENT } from '../env';
import { drainRunning, OutboxBench, outboxMessages } from '../outbox';
import { timed, type Sample, type Scenario, type Target } from '../runner';

/** One broker as a relay scenario sees it: ferry's publisher and the raw client beside it. */
export interface RelayBroker {
  /** `OutboxMessage.destination` for both sides (topic, `/queue`, queue URL). */
  readonly destination: string;
  /** The transport's publisher, built with its own constructor (as the conformance suite does). */
  readonly publisher: Publisher;
  /** Encodes one batch for the raw client (not timed) and returns the send (timed). */
  prepare(batch: readonly OutboxMessage[]): () => Promise<void>;
  /** Called before every run of either side, not timed (e.g. purge the queue). */
  reset?(): Promise<void>;
  close(): Promise<void>;
}

export interface RelayScenarioSpec {
  readonly name: string;
  readonly baselineLabel: string;
  readonly subjectLabel: string;
  readonly targets?: readonly Target[];
  openBroker(): Promise<RelayBroker>;
}

/**
 * Subject: `n` events emitted (emitMany, one transaction, not timed), then relayed by
 * `createRelay` + the transport's publisher (`start()`, batches of BATCH_SIZE, default
 * pipelineDepth) until every event is SENT. Baseline: the raw client sending the same `n` messages in
 * batches of BATCH_SIZE, awaiting the broker's acknowledgement of each batch.
 */
export function relayScenario(spec: RelayScenarioSpec): Scenario {
  return {
    name: spec.name,
    unit: 'events/s',
    better: 'higher',
    baselineLabel: spec.baselineLabel,
    subjectLabel: spec.subjectLabel,
    ...(spec.targets ? { targets: spec.targets } : {}),
    async open() {
      const { bench, broker } = await openRelaySides(spec.openBroker);
      return {
        async baseline(n) {
          await broker.reset?.();
          const sends = chunks(outboxMessages(n, broker.destination), BATCH_SIZE).map((batch) =>
            broker.prepare(batch),
          );
          return timed(async () => {
            for (const send of sends) await send();
            return { ops: n, verified: true };
          });
        },
        subject: (n) => relayRun(bench, broker, n),
        async close() {
          await broker.close();
          await bench.close();
        },
      };
    },
  };
}

/** A fresh outbox database and the broker; the database is dropped if the broker cannot open. */
export async function openRelaySides<B extends RelayBroker>(
  openBroker: () => Promise<B>,
): Promise<{ bench: OutboxBench; broker: B }> {
  const bench = await OutboxBench.open();
  try {
    return { bench, broker: await openBroker() };
  } catch (error) {
    await bench.close();
    throw error;
  }
}

/**
 * ferry's side of a relay scenario: `n` events emitted (emitMany, one transaction, not timed),
 * then relayed by `createRelay` + the broker's publisher (`start()`, batches of BATCH_SIZE,
 * default pipelineDepth, `onSent` as BENCH_SENT says) until every event is sent. Verified when
 * all `n` are SENT (BENCH_SENT=delete: all gone) and nothing else is left.
 */
export async function relayRun(bench: OutboxBench, broker: RelayBroker, n: number): Promise<Sample> {
  await broker.reset?.();
  await bench.backlog(n, broker.destination);
  const make = (observer: OutboxObserver) =>
    createRelay({
      db: bench.db,
      publisher: broker.publisher,
      options: { batchSize: BATCH_SIZE, onSent: SENT },
      observer,
    });
  const sample = await timed(async () => ({ ops: await drainRunning(make, n), verified: true }));
  return { ...sample, verified: sample.ops === n && (await bench.allSent(n, SENT)) };
}
