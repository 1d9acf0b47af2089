import { expect } from './jest';
import { timedCases } from './timeouts';
import { waitUntil } from './assertions';
import type { MemoryAcceptor } from './memoryAcceptor';
import { conformanceMessages, neverAborted } from './messages';
import type { AttachedConsumer, TransportUnderTest } from './types';

/** What the settlement cases need from the suite (read at run time, after beforeEach). */
export interface SettlementContext {
  readonly timeoutMs: number;
  /** `features.heldCount`: the broker's count of what it still holds can be read. */
  readonly heldCount: boolean;
  /** The suite's restartBroker when `features.redeliveryAfterRestart`, else undefined. */
  readonly restartBroker: (() => Promise<void>) | undefined;
  transport(): TransportUnderTest;
  acceptor(): MemoryAcceptor;
  /** Every consumer attached in the current case; the suite closes them after it. */
  readonly consumers: readonly AttachedConsumer[];
  attach(): Promise<void>;
  publishAllSent(count: number): Promise<string[]>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
}

/**
 * A delivery leaves the broker only once the inbox answered for it, and leaves it then. Every
 * other case ends with the messages accepted by the process they were offered to, which a
 * consumer that acks on receipt, or nacks by dropping, also passes; here the process gives the
 * deliveries up (close, broker restart) while their acceptance is in flight and then fails, so
 * only the broker can bring them back. With `heldCount`, the broker must also hold nothing once
 * every message was accepted and the consumers closed: a duplicate answered but never acked (or
 * committed, or deleted) stays with the broker and is delivered again for ever.
 */
export function registerSettlementCases(context: SettlementContext): void {
  const it = timedCases(context.timeoutMs);

  /** Closes every consumer of the case; with `heldCount`, waits until the broker holds nothing. */
  async function expectNothingHeld(): Promise<void> {
    await Promise.all(context.consumers.map((consumer) => consumer.close()));
    if (!context.heldCount) return;
    const transport = context.transport();
    const read = transport.heldCount;
    expect(typeof read).toBe('function');
    let last = -1;
    try {
      await waitUntil(
        'the broker holding nothing once every message was accepted and the consumers closed',
        async () => {
          last = await read!.call(transport);
          return last === 0 ? true : undefined;
        },
        context.timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message} (it still holds ${last})`);
    }
  }

  /**
   * Holds the acceptance of the first batch, runs `interrupt` (a broker restart, or nothing),
   * closes the consumer and fails the held acceptance; a second consumer must then get every
   * message from the broker and the inbox accept each once.
   */
  async function giveUpInFlight(interrupt: () => Promise<void>): Promise<void> {
    const acceptor = context.acceptor();
    acceptor.hold();
    await context.attach();
    const ids = await context.publishAllSent(10);
    await waitUntil('a batch in acceptance', () => (acceptor.held > 0 ? true : undefined), context.timeoutMs);
    await interrupt();
    const first = context.consumers[context.consumers.length - 1]!;
    const closing = first.close();
    acceptor.failHeld();
    await closing;
    await context.attach();
    await context.expectAcceptedExactly(ids);
    await expectNothingHeld();
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
      await context.attach();
      const messages = conformanceMessages(20, transport.destination);
      const sent = await transport.publisher.publish(messages, neverAborted());
      const again = await transport.publisher.publish(messages.slice(0, 10), neverAborted());
      expect([...sent, ...again].filter((o) => o.status !== 'sent')).toEqual([]);
      await waitUntil(
        '30 deliveries offered',
        () => (acceptor.offered.length >= 30 ? true : undefined),
        context.timeoutMs,
      );
      await context.expectAcceptedExactly(messages.map((m) => m.id));
      await expectNothingHeld();
    });
  }
}
