import type { OutboxMessage } from '../contracts';
import type { BrokerSignal, CircuitBreaker, CircuitTransition } from './circuit';

/**
 * How many refused destinations the relay remembers (the least recently refused forgotten). A
 * forgotten one is probed like a healthy one (its refusal then forgets the next): the probe's
 * visit claims in visit order, not due order, so that cascade does not hold back the healthy
 * destinations visited after it (review 61; docs/outbox.md, Broker outages).
 */
const REFUSED_KEPT = 1_000;

/**
 * The destinations whose last publish the broker answered `unavailable`, so that a half-open
 * probe claims from the others first (sql/probeClaim.ts). One destination the broker cannot take
 * (a queue the role may not send to, an offline topic) has its backlog at the head of the due
 * order, and the probe claimed the oldest due row: reviews 45 and 46 found one failed probe per
 * row, then per ten batches of it, each reopening the circuit for longer, before another
 * destination's event; a flapping circuit (a probe of a healthy event closes it, the next closed
 * claim of dead rows opens it) left dead rows at both ends of the due order around the healthy
 * events, and the wait grew with the dead backlog.
 *
 * A destination is refused from the cycle whose outcomes for it were all `unavailable` (any
 * cycle: closed, probe, pipelined, stale) until one of its publishes is answered otherwise. When
 * no other destination has a claimable due row, the probe takes rows of one refused destination,
 * the least recently refused one that has any: refused again it goes to the back of this list, so
 * every refused destination is probed again in turn (a broker-wide blip refuses healthy
 * destinations too: review 59), and the broker is learnt to be back for it; a closed claim takes
 * its rows in due order as before. No row is moved: the due order is as emit, release and retries
 * left it.
 */
export class UnavailableHold {
  /** Refused destinations ('' for the default one), least recently refused first. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly breaker: CircuitBreaker,
    private readonly report: (transition: CircuitTransition | undefined) => void,
  ) {}

  /**
   * Records the cycle (claimed at `epoch`) with the breaker, and which destinations the broker
   * refused (`unavailable`) or answered (`answered`), before its `unavailable` rows go back.
   */
  told(
    signal: BrokerSignal,
    epoch: number,
    unavailable: readonly OutboxMessage[],
    answered: readonly OutboxMessage[],
  ): void {
    this.report(this.breaker.record(signal, epoch));
    const reached = new Set(answered.map((message) => message.destination ?? ''));
    for (const name of reached) this.refused.delete(name);
    for (const { destination } of unavailable) {
      const name = destination ?? '';
      if (reached.has(name)) continue;
      this.refused.delete(name);
      this.refused.add(name);
    }
    for (const name of this.refused) {
      if (this.refused.size <= REFUSED_KEPT) break;
      this.refused.delete(name);
    }
  }

  /** The destinations a probe claims from last ('' for the default one), least recently refused first. */
  destinations(): string[] {
    return [...this.refused];
  }

  /** The relay closed: nothing is refused any more. */
  clear(): void {
    this.refused.clear();
  }
}
