import { createRelay, type OutboxMessage, type Publisher, type Relay } from '@ferry/core';
import { BATCH_SIZE, chunks } from '../env';
import { drainRelay, OutboxBench, outboxMessages } from '../outbox';
import { timed, type Scenario } from '../runner';

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
  openBroker(): Promise<RelayBroker>;
}

/**
 * Subject: `n` events emitted (emitMany, one transaction, not timed), then relayed by
 * `createRelay` + the transport's publisher (`runOnce` back to back, batches of BATCH_SIZE)
 * until every event is SENT. Baseline: the raw client sending the same `n` messages in
 * batches of BATCH_SIZE, awaiting the broker's acknowledgement of each batch.
 */
export function relayScenario(spec: RelayScenarioSpec): Scenario {
  return {
    name: spec.name,
    unit: 'events/s',
    better: 'higher',
    baselineLabel: spec.baselineLabel,
    subjectLabel: spec.subjectLabel,
    async open() {
      const bench = await OutboxBench.open();
      let broker: RelayBroker | undefined;
      let relay: Relay | undefined;
      try {
        broker = await spec.openBroker();
        relay = createRelay({
          db: bench.db,
          publisher: broker.publisher,
          options: { batchSize: BATCH_SIZE },
        });
      } catch (error) {
        await broker?.close();
        await bench.close();
        throw error;
      }
      const b = broker;
      const r = relay;
      return {
        async baseline(n) {
          await b.reset?.();
          const sends = chunks(outboxMessages(n, b.destination), BATCH_SIZE).map((batch) => b.prepare(batch));
          return timed(async () => {
            for (const send of sends) await send();
            return { ops: n, verified: true };
          });
        },
        async subject(n) {
          await b.reset?.();
          await bench.backlog(n, b.destination);
          const sample = await timed(async () => ({ ops: await drainRelay(r, bench), verified: true }));
          return { ...sample, verified: sample.ops === n && (await bench.allSent(n)) };
        },
        async close() {
          await r.close();
          await b.close();
          await bench.close();
        },
      };
    },
  };
}
