import { expect } from './jest';
import { timedCases } from './timeouts';
import { waitUntil } from './assertions';
import { pause } from '../wait';
import type { MemoryAcceptor } from './memoryAcceptor';
import type { OutboxMessage } from '@ferry/core';
import { conformanceMessages } from './messages';
import type { AttachedConsumer, TransportUnderTest } from './types';

/** What the settlement cases need from the suite (read at run time, after beforeEach). */
export interface SettlementContext {
  readonly timeoutMs: number;
  /** `features.heldCount`: the broker's count of what it still holds can be read. */
  readonly heldCount: boolean;
  /** `features.orderingPerKey`: what comes back keeps its key's order. */
  readonly orderingPerKey: boolean;
  /** The suite's restartBroker when `features.redeliveryAfterRestart`, else undefined. */
  readonly restartBroker: (() => Promise<void>) | undefined;
  transport(): TransportUnderTest;
  acceptor(): MemoryAcceptor;
  /** Every consumer attached in the current case; the suite closes them after it. */
  readonly consumers: readonly AttachedConsumer[];
  attach(): Promise<void>;
  /** Publishes until each message is reported sent (publishUntilSent). */
  sendAll(messages: readonly OutboxMessage[]): Promise<void>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
  /** Closes the case's consumers; with `heldCount`, waits until the broker holds nothing. */
  expectNothingHeld(): Promise<void>;
}

/** Messages published by the give-up cases: more than one batch of any transport's default. */
const GIVE_UP_COUNT = 60;
/** How long close() is watched, while its batch is held in acceptance, for resolving too early. */
const CLOSE_WATCH_MS = 100;

/**
 * A delivery leaves the broker only once the inbox answered for it, and leaves it then. Every
 * other case ends with the messages accepted by the process they were offered to, which a
 * consumer that acks on receipt, or nacks by dropping, also passes; here the process gives the
 * deliveries up (close, broker restart) while their acceptance is in flight and then fails, so
 * only the broker can bring them back (in their key's order, with `orderingPerKey`). With
 * `heldCount`, the broker must also hold nothing once every message was accepted and the
 * consumers closed: a duplicate answered but never acked (or committed, or deleted) stays with the
 * broker and is delivered again for ever.
 */
export function registerSettlementCases(context: SettlementContext): void {
  const it = timedCases(context.timeoutMs);

  /**
   * Holds the acceptance of the first batch, runs `interrupt` (a broker restart, or nothing),
   * closes the consumer (which must wait for the batch in flight) and fails the held acceptance; a
   * second consumer must then get every message from the broker and the inbox accept each once.
   */
  async function giveUpInFlight(interrupt: () => Promise<void>): Promise<void> {
    const transport = context.transport();
    const acceptor = context.acceptor();
    acceptor.hold();
    // Published before the consumer is attached: its first batch is as large as it takes them.
    const messages = conformanceMessages(GIVE_UP_COUNT, transport.destination, {
      orderingKey: context.orderingPerKey ? 'conformance-give-up' : null,
    });
    await context.sendAll(messages);
    await context.attach();
    await waitUntil('a batch in acceptance', () => (acceptor.held > 0 ? true : undefined), context.timeoutMs);
    await interrupt();
    const first = context.consumers[context.consumers.length - 1]!;
    let closed = false;
    const closing = first.close().then(() => {
      closed = true;
    });
    // close() waits for every batch in flight: it cannot have resolved while one is held.
    await pause(CLOSE_WATCH_MS);
    expect({ closedWhileBatchHeld: closed }).toEqual({ closedWhileBatchHeld: false });
    acceptor.failHeld();
    await closing;
    await context.attach();
    const ids = messages.map((m) => m.id);
    await context.expectAcceptedExactly(ids);
    if (context.orderingPerKey) expect(acceptor.accepted).toEqual(ids);
    await context.expectNothingHeld();
  }

  it('gives back the deliveries whose acceptance was in flight at close() and failed: the next consumer gets each', async () => {
    await giveUpInFlight(async () => undefined);
  });

  const restartBroker = context.restartBroker;
  if (restartBroker) {
    it('brings back the deliveries whose acceptance was in flight at a broker restart and then failed', async () => {
      await giveUpInFlight(restartBroker);
    });
  }

  if (context.heldCount) {
    it('settles every delivery it was offered, duplicates included: closed, it leaves the broker nothing', async () => {
      const transport = context.transport();
      const acceptor = context.acceptor();
      const publish = (messages: readonly OutboxMessage[]) => context.sendAll(messages);
      // Before any consumer: heldCount must see them (it reads the source, not an empty place),
      // and a batch can hold a message and its duplicate.
      const early = conformanceMessages(5, transport.destination);
      await publish(early);
      await publish(early);
      await waitUntil(
        'heldCount reading the 10 messages published before a consumer was attached',
        async () => ((await transport.heldCount!()) >= 10 ? true : undefined),
        context.timeoutMs,
      );
      await context.attach();
      const messages = conformanceMessages(20, transport.destination);
      await publish(messages);
      await publish(messages.slice(0, 10));
      await waitUntil(
        '40 deliveries offered',
        () => (acceptor.offered.length >= 40 ? true : undefined),
        context.timeoutMs,
      );
      await context.expectAcceptedExactly([...early, ...messages].map((m) => m.id));
      await context.expectNothingHeld();
    });
  }
}
