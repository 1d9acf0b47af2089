import { reconnectDelayMs } from '../backoff';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitOptions {
  /** Consecutive cycles in which every outcome was `unavailable` before the circuit opens. */
  readonly failureThreshold: number;
  /** First open period; doubled after each failed probe … */
  readonly openMs: number;
  /** … up to this. */
  readonly maxOpenMs: number;
  /** Rows a half-open probe cycle may claim. */
  readonly probeBatchSize: number;
}

/**
 * An open (or half-open) circuit as an operator reads it (relay.circuitOutage, createHealth's
 * details): since when claiming is paused, why, and when the relay probes the broker.
 */
export interface CircuitOutage {
  /** 'open': no claims until `nextProbeAt`; 'half-open': that time has passed, a probe cycle is due or running. */
  readonly state: 'open' | 'half-open';
  /** When the circuit opened (a failed probe opening it again keeps this: the outage goes on). */
  readonly since: Date;
  /** The error of the cycle that opened it last (the latest failed probe's), as observed (redacted, cut). */
  readonly error: string;
  /** That cycle's every outcome was the publisher's closed answer (BrokerSignal.publisherClosed). */
  readonly publisherClosed: boolean;
  /** Times it opened since it was last closed: 1, then one more per failed probe. */
  readonly openings: number;
  /** When the open period ends and the relay probes the broker (past once half-open). */
  readonly nextProbeAt: Date;
}

/**
 * What opened a circuit, as the relay's warning and health's `relay circuit` check say it: a
 * cycle of only the publisher's closed answers is no word about the broker (review 148).
 */
export function openedBy(publisherClosed: boolean): 'publisher closed' | 'broker unavailable' {
  return publisherClosed ? 'publisher closed' : 'broker unavailable';
}

/** What a publish cycle told the breaker about the broker. */
export type BrokerSignal =
  | {
      readonly kind: 'unavailable';
      readonly error: string;
      /** Every outcome was the publisher's closed answer (isClosedAnswer): the broker may be fine. */
      readonly publisherClosed?: boolean;
    }
  /** At least one outcome other than `unavailable`: the broker answered. */
  | { readonly kind: 'reachable' };

export type CircuitTransition =
  | {
      readonly type: 'opened';
      readonly failures: number;
      readonly openMs: number;
      readonly error: string;
      /** True when a failed half-open probe opened it again (it was not closed in between). */
      readonly reopened: boolean;
      /** The cycle's every outcome was the publisher's closed answer (BrokerSignal.publisherClosed). */
      readonly publisherClosed: boolean;
    }
  | {
      readonly type: 'closed';
      readonly openedForMs: number;
      /** True when the relay closed (or stopped on an ended client) with its circuit open (end()); false when the broker answered. */
      readonly relayClosed: boolean;
    };

/**
 * The relay's broker-outage circuit breaker, pure (the clock is injected). Closed: claims run
 * normally. `failureThreshold` consecutive all-unavailable cycles open it: no claims for the
 * open period (capped exponential, the shared reconnect backoff). When the period has passed
 * it is half-open: one probe cycle of at most `probeBatchSize` rows; an answer from the broker
 * closes it, another all-unavailable cycle opens it again for a longer period.
 */
export class CircuitBreaker {
  private failures = 0;
  /** Openings since the circuit was last closed (drives the backoff). */
  private openings = 0;
  private openUntil = 0;
  private firstOpenedAt = 0;
  private isOpen = false;
  /** The signal that opened the circuit last (its error and cause), while it is open. */
  private opener: { readonly error: string; readonly publisherClosed: boolean } = {
    error: '',
    publisherClosed: false,
  };
  /** Transitions so far (opened or closed): a cycle claimed before the latest one is stale. */
  private transitions = 0;
  /** The latest time read off the clock (clockNow). */
  private lastNow = -Infinity;

  constructor(
    private readonly options: CircuitOptions,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): CircuitState {
    if (!this.isOpen) return 'closed';
    return this.clockNow() >= this.openUntil ? 'half-open' : 'open';
  }

  /**
   * The clock, read through a guard against it going back (an NTP step, an operator setting the
   * time): the open period and its start move back with it, so an open circuit stays open for its
   * period and no longer. Counted as read, a clock stepped back an hour left the circuit open,
   * claiming nothing, for that hour, far past maxOpenMs (review 154). A step forward only ends
   * the period early: one probe sooner.
   */
  private clockNow(): number {
    const now = this.now();
    if (now < this.lastNow) {
      const back = this.lastNow - now;
      this.openUntil -= back;
      this.firstOpenedAt -= back;
    }
    this.lastNow = now;
    return now;
  }

  /** The outage while the circuit is open or half-open; null while it is closed. */
  get outage(): CircuitOutage | null {
    const state = this.state;
    if (state === 'closed') return null;
    return {
      state,
      since: new Date(this.firstOpenedAt),
      ...this.opener,
      openings: this.openings,
      nextProbeAt: new Date(this.openUntil),
    };
  }

  /** Milliseconds until an open circuit turns half-open (0 when not open). */
  remainingOpenMs(): number {
    return this.state === 'open' ? Math.max(0, this.openUntil - this.clockNow()) : 0;
  }

  /** Rows the next claim may take: 0 while open, the probe size half-open, `batchSize` closed. */
  claimLimit(batchSize: number): number {
    const state = this.state;
    if (state === 'open') return 0;
    return state === 'half-open' ? Math.min(batchSize, this.options.probeBatchSize) : batchSize;
  }

  /** Pass to record() with the cycle's outcome: taken when the cycle claims. */
  get epoch(): number {
    return this.transitions;
  }

  /**
   * Records one publish cycle claimed at `epoch` (default: now); returns the transition it
   * caused, if any. An all-unavailable cycle claimed before the latest transition says nothing
   * new (with pipelined cycles, one claimed before the circuit opened is no failed probe, and
   * one claimed before it closed no new failure): ignored. An answer from the broker is news
   * whenever the cycle was claimed.
   */
  record(signal: BrokerSignal, epoch: number = this.transitions): CircuitTransition | undefined {
    const state = this.state;
    if (signal.kind === 'reachable') {
      this.failures = 0;
      if (state === 'closed') return undefined;
      const openedForMs = this.clockNow() - this.firstOpenedAt;
      this.isOpen = false;
      this.openings = 0;
      this.transitions += 1;
      return { type: 'closed', openedForMs, relayClosed: false };
    }
    if (state === 'open' || epoch < this.transitions) return undefined;
    this.failures += 1;
    if (state === 'closed' && this.failures < this.options.failureThreshold) return undefined;
    const openMs = reconnectDelayMs(this.options.openMs, this.options.maxOpenMs, this.openings);
    const reopened = state !== 'closed';
    const now = this.clockNow();
    if (!reopened) this.firstOpenedAt = now;
    this.openings += 1;
    this.isOpen = true;
    this.transitions += 1;
    this.openUntil = now + openMs;
    const publisherClosed = signal.publisherClosed === true;
    this.opener = { error: signal.error, publisherClosed };
    return {
      type: 'opened',
      failures: this.failures,
      openMs,
      error: signal.error,
      reopened,
      publisherClosed,
    };
  }

  /**
   * The relay is closed: an open (or half-open) circuit ends with it, so whoever counts open
   * circuits stops counting this one. Returns the transition, undefined when it was closed.
   */
  end(): CircuitTransition | undefined {
    if (!this.isOpen) return undefined;
    const openedForMs = this.clockNow() - this.firstOpenedAt;
    this.isOpen = false;
    this.failures = 0;
    this.openings = 0;
    this.transitions += 1;
    return { type: 'closed', openedForMs, relayClosed: true };
  }
}
