import type { OutboxMessage } from '../contracts';
import type { BrokerSignal, CircuitBreaker, CircuitTransition } from './circuit';
import type { RelayStore } from './store';

/** How many rows handed back unavailable one outage remembers (the oldest forgotten). */
const HELD_KEPT = 10_000;

/**
 * The rows the relay handed back `unavailable` since the broker last answered. A half-open probe
 * claims the oldest due row, and rows handed back earlier in the outage were older than any event
 * emitted since, so one destination the broker cannot take (a queue the role may not send to,
 * an offline topic) held every other destination's events behind a failed probe per row of it,
 * each reopening the circuit for longer (review 45). After a failed probe they all go behind the
 * rows due now, with the oldest due rows of the destinations the probe found unavailable (ten
 * batches' worth: a backlog of a dead destination larger than a batch, or rows handed back before the
 * circuit opened, cost a probe each; review 46): the next probe takes an event of another
 * destination that was waiting, if any. No clock but the database's: rows held are due again at
 * once, and a broker that is down for all of them is probed as before.
 */
export class UnavailableHold {
  private readonly held = new Set<string>();

  constructor(
    private readonly breaker: CircuitBreaker,
    private readonly store: RelayStore,
    /** Due rows of the failed destinations held back per failed probe (ten of the relay's batches). */
    private readonly dueLimit: number,
    private readonly report: (transition: CircuitTransition | undefined) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Records the cycle (claimed at `epoch`) with the breaker, before its `unavailable` rows go back. */
  async told(signal: BrokerSignal, epoch: number, unavailable: readonly OutboxMessage[]): Promise<void> {
    const transition = this.breaker.record(signal, epoch);
    this.report(transition);
    if (signal.kind === 'reachable') {
      this.held.clear();
      return;
    }
    if (transition?.type === 'opened' && transition.reopened) {
      // Best effort: without it the next probe may take one of them again, as before.
      await this.store
        .holdBack(
          [...this.held],
          unavailable.map((message) => message.destination),
          this.dueLimit,
        )
        .catch(this.onError);
    }
    for (const { id } of unavailable) {
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
