import type { BrokerSignal, CircuitBreaker, CircuitTransition } from './circuit';
import type { RelayStore } from './store';

/** How many rows handed back unavailable one open circuit remembers (the oldest forgotten). */
const HELD_KEPT = 10_000;

/**
 * The rows the relay handed back `unavailable` since its circuit opened. A half-open probe claims
 * the oldest due row, and rows handed back earlier in the outage were older than any event
 * emitted since, so one destination the broker cannot take (a queue the role may not send to,
 * an offline topic) held every other destination's events behind a failed probe per row of it,
 * each reopening the circuit for longer (review 45). After a failed probe they all go behind the
 * rows due now (sql/holdBack.ts): the next probe takes an event that was waiting, if any, so one
 * waits behind at most two failed probes. No clock but the database's: rows held are due again
 * at once, and a broker that is down for all of them is probed as before.
 */
export class UnavailableHold {
  private readonly held = new Set<string>();

  constructor(
    private readonly breaker: CircuitBreaker,
    private readonly store: RelayStore,
    private readonly report: (transition: CircuitTransition | undefined) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Records the cycle (claimed at `epoch`) with the breaker, before its `unavailable` rows go back. */
  async told(signal: BrokerSignal, epoch: number, unavailable: readonly string[]): Promise<void> {
    const transition = this.breaker.record(signal, epoch);
    this.report(transition);
    if (this.breaker.state === 'closed') {
      this.held.clear();
      return;
    }
    if (signal.kind !== 'unavailable') return;
    if (transition?.type === 'opened' && transition.reopened && this.held.size > 0) {
      // Best effort: without it the next probe may take one of them again, as before.
      await this.store.holdBack([...this.held]).catch(this.onError);
    }
    for (const id of unavailable) {
      this.held.delete(id);
      this.held.add(id);
    }
    for (const id of this.held) {
      if (this.held.size <= HELD_KEPT) break;
      this.held.delete(id);
    }
  }

  /** The relay closed: nothing is held any more. */
  clear(): void {
    this.held.clear();
  }
}
