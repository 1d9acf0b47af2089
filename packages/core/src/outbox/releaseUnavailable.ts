import type { OutboxMessage } from '../contracts';
import { isClosedAnswer } from '../transport/closedOutcome';
import type { BrokerSignal } from './circuit';
import type { Completion } from './sql/completeBatch';
import type { RelayStore } from './store';

/**
 * Hands the batch's `unavailable` rows back through the fenced release (no attempt spent, the
 * claim counter restored) and returns what is left to complete, plus what the cycle says about
 * the broker: unavailable only when every outcome was (`publisherClosed` when each was the
 * publisher's closed answer: isClosedAnswer), which `told` hears first (with the rows refused and
 * those answered, per destination: unavailableHold.ts).
 */
export async function releaseUnavailable(
  store: RelayStore,
  token: string,
  messages: readonly OutboxMessage[],
  all: readonly Completion[],
  told: (
    signal: BrokerSignal,
    unavailable: readonly OutboxMessage[],
    answered: readonly OutboxMessage[],
  ) => void = () => undefined,
): Promise<{
  released: number;
  completions: Completion[];
  messages: OutboxMessage[];
  signal: BrokerSignal;
}> {
  const unavailable = all.filter((c) => c.kind === 'unavailable');
  const completions = all.filter((c) => c.kind !== 'unavailable');
  const signal: BrokerSignal =
    completions.length > 0
      ? { kind: 'reachable' }
      : {
          kind: 'unavailable',
          error: unavailable[0]?.error ?? 'broker unavailable',
          publisherClosed: unavailable.length > 0 && unavailable.every((c) => isClosedAnswer(c.error)),
        };
  const unavailableIds = new Set(unavailable.map((c) => c.id));
  const ids = new Set(completions.map((c) => c.id));
  const answered = messages.filter((m) => ids.has(m.id));
  told(
    signal,
    messages.filter((m) => unavailableIds.has(m.id)),
    answered,
  );
  const released =
    unavailable.length > 0
      ? await store.release(
          token,
          unavailable.map((c) => c.id),
        )
      : 0;
  return { released, completions, messages: answered, signal };
}
