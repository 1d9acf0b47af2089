/**
 * Review 28 of fddc463 (hostile review of the transport conformance suite, settlementCases.ts and
 * the `heldCount` feature): broken transports that still pass the whole suite.
 *
 * The defect is in the suite (packages/testing/src/conformance/): a transport author "runs
 * `runTransportConformance` and ships when it is green" (docs/conformance.md), so every case of the
 * transport contract must be able to fail. The contract (transports' READMEs, e.g. RabbitMQ's):
 * "its deliveries are acked ... only after its own `acceptMany` committed"; "invalid before
 * acceptance: no identity, ..., over the payload limit, ... | copy to the dead-letter exchange ...
 * then ack"; "`close()` waits for every batch in flight"; heldCount's own doc: "Dead-lettered
 * messages are settled"; ordering per key (features.orderingPerKey: "Messages that share an
 * ordering key reach the inbox in publish order"); each delivery accepted under its own tenant.
 *
 * Harness: copied from review25-conformance-mutants.test.ts (the suite's jest functions are
 * recorded and each case run with its beforeEach / afterEach) against the in-memory transport of
 * @ferry/testing, with broken pieces swapped in here only. Each test names a plausible real bug and
 * expects at least one conformance case to fail; each fails on HEAD because the whole suite passes
 * the broken transport, so a real transport with the same bug would ship green.
 */
import { InboxAdmissionRejectedError, type InboxAcceptInput, type InboxAcceptor } from '@ferry/core';
import { InMemoryBroker, type Unacked } from '@ferry/testing';
import type { TransportConformanceOptions } from '@ferry/testing/conformance';
import { inMemoryConformance, type InMemoryVariant } from './support/inMemoryConformance';
import { conformanceFailures } from './support/recordedConformance';
import { DuplicatesUnacked, idOf } from './support/brokenBrokers';

jest.mock('../src/conformance/jest', () =>
  jest
    .requireActual<typeof import('./support/recordedConformance')>('./support/recordedConformance')
    .recordingJest(),
);

const TIMEOUT_MS = 2_000;
/** jest's timeout of each test here: one run of the whole suite, about twenty cases. */
const SUITE_RUN_MS = 180_000;
/** The broken transports' tests that ask only whether the suite fails: the run stops at its first failed case. */
const UNTIL_FIRST = { untilFirst: true };

/** test/conformance.test.ts's options, with the variant's pieces swapped in. */
function inMemoryTransport(variant: InMemoryVariant = {}): TransportConformanceOptions {
  return inMemoryConformance({ name: 'in-memory (review28 variant)', timeoutMs: TIMEOUT_MS, ...variant });
}

/** An acceptor seen through `map`, applied to each batch of inputs. */
function mappingBatches(
  map: (inputs: readonly InboxAcceptInput[]) => InboxAcceptInput[],
): (acceptor: InboxAcceptor) => InboxAcceptor {
  return (acceptor) => ({
    maxPayloadBytes: acceptor.maxPayloadBytes,
    acceptMany: (inputs) => acceptor.acceptMany(map(inputs)),
  });
}

describe('review28: the transport conformance suite against broken in-memory transports', () => {
  // Control: this file's wiring (test/support/inMemoryConformance.ts's, rebuilt) passes every case.
  it(
    'control: the in-memory transport as shipped passes every case',
    async () => {
      expect(await conformanceFailures(inMemoryTransport())).toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // Control: review 25's consumer leaving duplicates unacked fails (the held case catches it).
  it(
    'control: a consumer that leaves duplicates unacked fails the suite',
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({ broker: () => new DuplicatesUnacked() }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer with batches of up to 50 that acks a batch of more than 10 deliveries on receipt,
  // before the inbox answered (a "fast path" for big batches; Kafka and RabbitMQ batches are
  // hundreds). A big batch whose acceptance then fails is lost. The give-up cases publish exactly
  // 10 messages and the other cases' big batches are all accepted in the end, so the suite passes.
  it(
    'a consumer that acks batches of more than 10 deliveries before acceptance fails the suite',
    async () => {
      let earlyBatches = 0;
      class AcksBigBatchesOnReceipt extends InMemoryBroker {
        private readonly early = new Set<Unacked>();
        override take(queue: string, max: number): Unacked[] {
          const taken = super.take(queue, max);
          if (taken.length > 10) {
            earlyBatches += 1;
            super.ack(taken);
            for (const item of taken) this.early.add(item);
          }
          return taken;
        }
        override ack(items: readonly Unacked[]): void {
          super.ack(items.filter((item) => !this.early.has(item)));
        }
        override nack(items: readonly Unacked[]): void {
          super.nack(items.filter((item) => !this.early.has(item)));
        }
      }
      const failures = await conformanceFailures(
        inMemoryTransport({ broker: () => new AcksBigBatchesOnReceipt(), consumer: { maxBatchSize: 50 } }),
      );
      expect(earlyBatches).toBeGreaterThan(0); // the bug did run
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that copies an invalid delivery to the dead-letter destination and never acks the
  // original ("copy to the dead-letter exchange ... then ack": the ack forgotten). The broker holds
  // it for ever; RabbitMQ gives it to the next consumer, which dead-letters it again (a second
  // copy), and SQS shows it again after each visibility timeout. heldCount's doc: "Dead-lettered
  // messages are settled", but no dead-letter case asks the broker what it still holds.
  it(
    'a consumer that dead-letters a delivery without settling it fails the suite',
    async () => {
      let leftHeld = 0;
      class DeadLetterNotAcked extends InMemoryBroker {
        private readonly copies = new Map<
          string,
          { delivery: Unacked['delivery']; reason: string; detail: string }[]
        >();
        override deadLetter(item: Unacked, reason: string, detail: string): void {
          leftHeld += 1;
          const list = this.copies.get(item.queue) ?? [];
          list.push({ delivery: item.delivery, reason, detail });
          this.copies.set(item.queue, list);
        }
        override deadLetters(queue: string) {
          return [...(this.copies.get(queue) ?? [])];
        }
      }
      const failures = await conformanceFailures(
        inMemoryTransport({ broker: () => new DeadLetterNotAcked() }),
      );
      expect(leftHeld).toBeGreaterThan(0); // the bug did run
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that resolves the tenant once per batch (from its first delivery) and accepts the
  // whole batch under it: a batch mixing two tenants' messages puts one tenant's messages in the
  // other's inbox, and two tenants' messages with one id dedupe into one (one lost). Every message
  // the suite publishes has the one tenant 'conformance-tenant' (and its raw ones none), so the
  // tenant check of the first case cannot tell: it passes.
  it(
    "a consumer that accepts a batch under its first delivery's tenant fails the suite",
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({
          acceptor: mappingBatches((inputs) =>
            inputs.map((input) => ({ ...input, tenantId: inputs[0]!.tenantId })),
          ),
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that gives a batch whose acceptance failed back at the tail of the queue (a
  // republish, or SQS-style requeue) instead of where it was: messages sharing an ordering key
  // then reach the inbox out of order after any failed acceptance. The ordering case has no
  // failure and the failure cases do not look at the order: it passes.
  it(
    'a consumer that loses the order of an ordering key after a failed acceptance fails the suite',
    async () => {
      let toTail = 0;
      class NackToTail extends InMemoryBroker {
        private sessions = 0;
        override restart(): void {
          super.restart();
          this.sessions += 1;
        }
        override nack(items: readonly Unacked[]): void {
          const current = items.filter((item) => item.session === this.sessions);
          if (current.length > 0) toTail += 1;
          this.ack(current);
          for (const item of current) this.send(item.queue, item.delivery);
        }
      }
      const failures = await conformanceFailures(inMemoryTransport({ broker: () => new NackToTail() }));
      expect(toTail).toBeGreaterThan(0); // the bug did run
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that never checks a delivery's size against the inbox's maxPayloadBytes ("over the
  // payload limit | copy to the dead-letter exchange ... then ack"; the reject reason
  // payload_too_large): an oversized body goes to the inbox as is. No case sends a body over the
  // acceptor's limit (256 KiB), so the suite passes.
  it(
    'a consumer that ignores the payload limit fails the suite',
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({
          acceptor: (acceptor) => ({
            maxPayloadBytes: Number.MAX_SAFE_INTEGER,
            acceptMany: (inputs) => acceptor.acceptMany(inputs),
          }),
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that acks what the inbox answered `invalid` or `conflict` as if it were a
  // duplicate, with no dead letter: a message whose id was reused with another payload, or one the
  // inbox refused (invalid text, too deep, too large), vanishes without a trace. README: "inbox
  // result `invalid` / `conflict` | dead-letter likewise (`inbox_invalid`, `fingerprint_conflict`)".
  // The suite's MemoryAcceptor never answers either (nor enforces maxPayloadBytes), so no case
  // reaches this path: the suite passes.
  it(
    'a consumer that settles inbox-invalid and conflicting deliveries without dead-lettering them fails the suite',
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({
          acceptor: (acceptor) => ({
            maxPayloadBytes: acceptor.maxPayloadBytes,
            acceptMany: async (inputs) =>
              (await acceptor.acceptMany(inputs)).map((result) =>
                result.kind === 'invalid' || result.kind === 'conflict'
                  ? { kind: 'duplicate' as const, id: 'settled-silently' }
                  : result,
              ),
          }),
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A close() that reports the consumer closed and resolves at once, while its batch in flight is
  // still in acceptance (it settles, or gives back, later). README: "`close()` waits for every
  // batch in flight"; an application then closes the inbox and the database pool under an
  // acceptance still running, and the process may exit before the batch is acked. The give-up case
  // fails the held acceptance before it awaits close() and never asks whether close() waited.
  it(
    'a close() that resolves before the batch in flight settled fails the suite',
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({
          attached: (consumer, { emit, instance }) => {
            let closing: Promise<void> | undefined;
            return {
              ready: () => consumer.ready(),
              check: () => consumer.check(),
              close() {
                closing ??= (async () => {
                  void consumer.close();
                  emit({
                    type: 'disconnected',
                    transport: 'memory',
                    source: 'conformance',
                    instance: instance(),
                    reason: 'closed',
                    error: 'consumer closed',
                    retryInMs: null,
                  });
                })();
                return closing;
              },
            };
          },
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // heldCount can be fooled: wired to read the wrong place (a retry queue, another consumer group,
  // a topic name with a typo) it reads 0, and the held case then passes review 25's consumer that
  // leaves duplicates unacked. The suite never checks that heldCount can read anything but 0 (e.g.
  // the messages published before a consumer was attached).
  it(
    'a heldCount that always reads 0 (wired to the wrong queue) does not let a consumer leaving duplicates unacked pass',
    async () => {
      const failures = await conformanceFailures(
        inMemoryTransport({
          broker: () => new DuplicatesUnacked(),
          heldCount: (broker, queue) => broker.held(`${queue}.retry`),
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that, at the admission limit, reports the duplicates the inbox answered anyway
  // settled but never acks them (README: "the deliveries the inbox answered anyway are settled at
  // once (duplicates acked ...)"). The broker holds each for ever. The admission case counts
  // `settled` events only and never asks the broker what it still holds; on the in-memory
  // transport its duplicate is even taken alone, ahead of the refused ones, so the path does not
  // run at all. The suite passes.
  it(
    'a consumer that leaves the duplicates answered at the admission limit unacked fails the suite',
    async () => {
      let refusedWithDuplicate = false;
      class DropsNextAck extends InMemoryBroker {
        override ack(items: readonly Unacked[]): void {
          if (refusedWithDuplicate) {
            refusedWithDuplicate = false;
            return;
          }
          super.ack(items);
        }
      }
      const failures = await conformanceFailures(
        inMemoryTransport({
          broker: () => new DropsNextAck(),
          acceptor: (acceptor) => ({
            maxPayloadBytes: acceptor.maxPayloadBytes,
            acceptMany: async (inputs) => {
              try {
                return await acceptor.acceptMany(inputs);
              } catch (error) {
                if (
                  error instanceof InboxAdmissionRejectedError &&
                  error.results.some((result) => result.kind === 'duplicate')
                )
                  refusedWithDuplicate = true;
                throw error;
              }
            },
          }),
        }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that records only the first dead letter of a batch: the other invalid deliveries of
  // the batch are acked with no copy on the dead-letter destination (lost without a trace). Every
  // case publishes its invalid deliveries one publishRaw at a time, and the in-memory consumer
  // takes each alone: no batch holds two, and the suite passes.
  it(
    'a consumer that acks the second invalid delivery of a batch without a dead letter fails the suite',
    async () => {
      class OneDeadLetterPerBatch extends InMemoryBroker {
        private readonly batchOf = new Map<Unacked, Set<Unacked>>();
        private readonly batchesWithLetter = new Set<Set<Unacked>>();
        override take(queue: string, max: number): Unacked[] {
          const taken = super.take(queue, max);
          const batch = new Set(taken);
          for (const item of taken) this.batchOf.set(item, batch);
          return taken;
        }
        override deadLetter(item: Unacked, reason: string, detail: string): void {
          const batch = this.batchOf.get(item);
          if (batch && this.batchesWithLetter.has(batch)) {
            this.ack([item]);
            return;
          }
          if (batch) this.batchesWithLetter.add(batch);
          super.deadLetter(item, reason, detail);
        }
      }
      const failures = await conformanceFailures(
        inMemoryTransport({ broker: () => new OneDeadLetterPerBatch() }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );

  // A consumer that leaves unacked a duplicate that arrives in the same batch as its original
  // (it dedupes the batch by message id and settles only the first of each id).
  it(
    'a consumer that leaves a duplicate of the same batch unacked fails the suite',
    async () => {
      class InBatchDuplicateUnacked extends InMemoryBroker {
        override ack(items: readonly Unacked[]): void {
          const ids = new Set<string>();
          super.ack(
            items.filter((item) => {
              if (ids.has(idOf(item))) return false;
              ids.add(idOf(item));
              return true;
            }),
          );
        }
      }
      const failures = await conformanceFailures(
        inMemoryTransport({ broker: () => new InBatchDuplicateUnacked() }),
        UNTIL_FIRST,
      );
      expect(failures).not.toEqual([]);
    },
    SUITE_RUN_MS,
  );
});
