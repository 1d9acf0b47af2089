import type { OutboxMessage } from '../contracts';
import type { BrokerSignal } from './circuit';
import type { Completion } from './sql/completeBatch';
import type { RelayStore } from './store';

/**
 * Hands the batch's `unavailable` rows back through the fenced release (no attempt spent, the
 * claim counter restored) and returns what is left to complete, plus what the cycle says about
 * the broker: unavailable only when every outcome was, which `told` hears first.
 */
export async function releaseUnavailable(
  store: RelayStore,
  token: string,
  messages: readonly OutboxMessage[],
  all: readonly Completion[],
  told: (signal: BrokerSignal, unavailable: readonly OutboxMessage[]) => Promise<void> = async () =>
    undefined,
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
      : { kind: 'unavailable', error: unavailable[0]?.error ?? 'broker unavailable' };
  const unavailableIds = new Set(unavailable.map((c) => c.id));
  await told(
    signal,
    messages.filter((m) => unavailableIds.has(m.id)),
  );
  const released =
    unavailable.length > 0
      ? await store.release(
          token,
          unavailable.map((c) => c.id),
        )
      : 0;
  const ids = new Set(completions.map((c) => c.id));
  return { released, completions, messages: messages.filter((m) => ids.has(m.id)), signal };
}
