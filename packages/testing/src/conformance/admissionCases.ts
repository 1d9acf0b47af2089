import { expect } from './jest';
import { timedCases } from './timeouts';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { diffIds, waitUntil } from './assertions';
import type { MemoryAcceptor } from './memoryAcceptor';
import type { OutboxMessage } from '@ferry/core';
import { conformanceMessages } from './messages';
import type { TransportUnderTest } from './types';

/** What the admission case needs from the suite (read at run time, after beforeEach). */
export interface AdmissionContext {
  readonly timeoutMs: number;
  readonly deadLetter: boolean;
  transport(): TransportUnderTest;
  acceptor(): MemoryAcceptor;
  consumerEvents(): readonly TransportConsumerEvent[];
  attach(): Promise<void>;
  publishAllSent(count: number): Promise<string[]>;
  /** Publishes until each message is reported sent (publishUntilSent). */
  sendAll(messages: readonly OutboxMessage[]): Promise<void>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
  /** Closes the case's consumers; with `heldCount`, waits until the broker holds nothing. */
  expectNothingHeld(): Promise<void>;
}

function settledCount(events: readonly TransportConsumerEvent[]): number {
  return events.reduce((sum, event) => (event.type === 'settled' ? sum + event.count : sum), 0);
}

/**
 * The admission limit is back-pressure: a batch refused at it still settles the duplicates
 * the inbox answered, the refused deliveries come back (reported acceptance-unavailable, never
 * dead-lettered, never acceptance-failed) and are accepted once the limit lets them in,
 * reported acceptance-recovered.
 */
export function registerAdmissionCases(context: AdmissionContext): void {
  const it = timedCases(context.timeoutMs);
  it('at the admission limit settles a duplicate at once and takes the refused deliveries later', async () => {
    const transport = context.transport();
    const acceptor = context.acceptor();
    await context.attach();
    const backlog = await context.publishAllSent(2);
    await context.expectAcceptedExactly(backlog);
    await waitUntil(
      'the backlog settled',
      () => (settledCount(context.consumerEvents()) >= 2 ? true : undefined),
      context.timeoutMs,
    );
    // A third message held in acceptance keeps the consumer busy while the duplicate and the new
    // ones are published, so that one batch can hold them all (the limit counts the three).
    acceptor.hold();
    const blocker = await context.publishAllSent(1);
    await waitUntil(
      'the third message in acceptance',
      () => (acceptor.held > 0 ? true : undefined),
      context.timeoutMs,
    );
    acceptor.admitAtMost(3);

    // One publish, the duplicate first: the consumer sees it in the batch (or ahead of) the new ones.
    const duplicate = conformanceMessages(1, transport.destination, { id: backlog[0]! });
    const fresh = conformanceMessages(2, transport.destination);
    await context.sendAll([...duplicate, ...fresh]);
    acceptor.release();
    const admitted = [...backlog, ...blocker];

    await waitUntil(
      'the duplicate settled while the new deliveries are refused',
      () => (settledCount(context.consumerEvents()) >= 4 ? true : undefined),
      context.timeoutMs,
    );
    const refused = fresh.map((m) => m.id);
    expect(diffIds(admitted, acceptor.accepted)).toEqual({ missing: [], extra: [] });
    // A transport may take its batches one at a time: a later refused delivery can wait
    // behind a held one, so only one of them is sure to be offered again before the lift.
    await waitUntil(
      'a refused delivery offered again',
      () => (refused.some((id) => acceptor.offered.filter((o) => o === id).length >= 2) ? true : undefined),
      context.timeoutMs,
    );
    expect(diffIds(admitted, acceptor.accepted)).toEqual({ missing: [], extra: [] });
    expect(context.consumerEvents().some((e) => e.type === 'acceptance-unavailable')).toBe(true);

    acceptor.admitAtMost(null);
    await context.expectAcceptedExactly([...admitted, ...refused]);
    // An observer that tracks the hold (unavailable, then recovered) sees it end.
    await waitUntil(
      'acceptance-recovered after the last acceptance-unavailable',
      () => {
        const types = context.consumerEvents().map((e) => e.type);
        const last = types.lastIndexOf('acceptance-unavailable');
        return types.slice(last + 1).includes('acceptance-recovered') ? true : undefined;
      },
      context.timeoutMs,
    );
    const events = context.consumerEvents();
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
    if (context.deadLetter) expect(await transport.readDeadLetters()).toEqual([]);
    // The duplicate answered at the limit was settled (acked), not only reported settled.
    await context.expectNothingHeld();
  });
}
