import { expect } from './jest';
import { timedCases } from './timeouts';
import type { PublishOutcome } from '@ferry/core';
import { isClosedAnswer, type TransportPublisherEvent } from '@ferry/core/transport';
import { diffIds, waitUntil } from './assertions';
import { MemoryAcceptor } from './memoryAcceptor';
import { conformanceMessages, neverAborted } from './messages';
import type { AttachedConsumer, TransportUnderTest } from './types';

/** What the lifecycle cases need from the suite (read at run time, after beforeEach). */
export interface LifecycleContext {
  readonly timeoutMs: number;
  transport(): TransportUnderTest;
  /** Events of the current case's publisher, in order. */
  publisherEvents(): readonly TransportPublisherEvent[];
  acceptor(): MemoryAcceptor;
  /** Every consumer attached in the current case; the suite closes them after it. */
  readonly consumers: readonly AttachedConsumer[];
  attach(to?: MemoryAcceptor): Promise<void>;
  publishAllSent(count: number): Promise<string[]>;
  expectAcceptedExactly(ids: readonly string[]): Promise<void>;
}

/** A publish settles with outcomes, or rejects; either is recorded. */
async function settle(
  publishing: Promise<readonly PublishOutcome[]>,
): Promise<{ outcomes: readonly PublishOutcome[] } | { error: unknown }> {
  return publishing.then(
    (outcomes) => ({ outcomes }),
    (error: unknown) => ({ error }),
  );
}

/**
 * close() twice, and what a closed publisher or consumer does. A publish in flight at close() and
 * a publish after it must report every message it did not have confirmed `unavailable`: a closed
 * publisher is a broker the relay cannot reach, never a verdict on the message (`retryable`, and a
 * rejection the relay makes retryable, spend an attempt per event and cycle of a relay left
 * running on it, until FAILED). A publish after close() is answered without a word to the
 * publisher's observer: its events end with close() (a relay left running on a closed publisher
 * probes it every cycle; each probe reported `publish-failed` to an observer its owner had shut
 * down, review 148). A closed consumer takes no more deliveries, so the next consumer
 * gets them.
 */
export function registerLifecycleCases(context: LifecycleContext): void {
  const it = timedCases(context.timeoutMs);
  it('resolves close() of the publisher twice; what a publish in flight or after close did not have confirmed is unavailable; no publisher event after close', async () => {
    const transport = context.transport();
    const inFlight = conformanceMessages(20, transport.destination);
    const during = settle(transport.publisher.publish(inFlight, neverAborted()));
    await Promise.all([transport.publisher.close(), transport.publisher.close()]);
    const atClose = context.publisherEvents().length;
    await transport.publisher.close();
    const messages = conformanceMessages(3, transport.destination);
    const after = await settle(transport.publisher.publish(messages, neverAborted()));
    await settle(transport.publisher.publish(conformanceMessages(2, transport.destination), neverAborted()));
    expect(context.publisherEvents().slice(atClose)).toEqual([]);
    // Unavailable with the publisher's closed answer (isClosedAnswer), in flight too: a relay whose
    // cycle close() ended says "publisher closed", not "broker unavailable" (review 149).
    const unsent = (result: Awaited<ReturnType<typeof settle>>, sent: boolean) =>
      'error' in result
        ? { rejected: String(result.error) }
        : result.outcomes.filter(
            (o) => !(o.status === 'unavailable' && isClosedAnswer(o.error)) && (!sent || o.status !== 'sent'),
          );
    expect({ inFlight: unsent(await during, true), after: unsent(after, false) }).toEqual({
      inFlight: [],
      after: [],
    });
    if (!('error' in after)) expect(after.outcomes.map((o) => o.id)).toEqual(messages.map((m) => m.id));
  });

  it('resolves close() of a consumer twice with one promise; a closed consumer takes no deliveries, the next one gets them', async () => {
    const first = context.acceptor();
    await context.attach();
    const before = await context.publishAllSent(5);
    await context.expectAcceptedExactly(before);
    const closing = context.consumers[context.consumers.length - 1]!;
    // The readiness probe of a consuming consumer is up; of a closed one, FERRY_CLOSED.
    await expect(closing.check()).resolves.toBeUndefined();
    const closed = closing.close();
    expect(closing.close()).toBe(closed);
    await closed;
    await closing.close();
    await expect(closing.ready()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    await expect(closing.check()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    const offeredAtClose = first.offered.length;

    const after = await context.publishAllSent(5);
    const next = new MemoryAcceptor();
    await context.attach(next);
    await waitUntil(
      'the next consumer accepting what was published after close',
      () => (diffIds(after, next.accepted).missing.length === 0 ? true : undefined),
      context.timeoutMs,
    );
    expect(first.offered.length).toBe(offeredAtClose);
  });
}
