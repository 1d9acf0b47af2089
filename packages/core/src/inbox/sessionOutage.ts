/**
 * An outage of the application's pool as the inbox worker saw it (Inbox.sessionOutage,
 * createHealth's details): its handler transactions got no session, while ferry's own statements
 * may run on another pool.
 */
export interface InboxSessionOutage {
  /** When the outage's first handler transaction got no session. */
  readonly since: Date;
  /** When its last one did. */
  readonly lastAt: Date;
  /** That one's error, described as observed (redacted, cut). */
  readonly lastError: string;
  /** Handler transactions that got no session in it (each claim given back, its attempt returned). */
  readonly transactions: number;
}

/**
 * Claims that cycle without progress as the inbox worker saw them (Inbox.claimCycling, createHealth's
 * details): given back for leases lost before their handler started (a database whose round trips
 * outlast the lease: claimed, given back uncharged, claimed again), no handler transaction of the
 * worker having begun since `since`. Nothing goes DEAD, so only this says so.
 */
export interface InboxClaimCycling {
  /** When the first claim was given back so since a handler transaction last began. */
  readonly since: Date;
  /** When the last one was. */
  readonly lastAt: Date;
  /** Claims given back so since then (queued ones whose batch lease was lost included). */
  readonly claims: number;
}

/**
 * The one record of the worker's outage of the application's pool, shared by its lanes: from the
 * first handler transaction that got no session (sessionGone) until one begins. Its age makes a
 * claim given back in it due later (inboxOutageDelayMs, review 104); health reports it (review
 * 105). An outage is over only once one of the worker's handler transactions begins before it was
 * interrupted (a session lent after its deadline ends nothing: review 149): a worker
 * that claims nothing meanwhile still reports it. It also keeps the worker's claims that cycle
 * (InboxClaimCycling), over at the same moment: both say its handler transactions make no progress.
 */
export class SessionOutage {
  /** performance.now() at the outage's start, or null when there is none. */
  private startedAt: number | null = null;
  private seen: InboxSessionOutage | null = null;

  private cycled: InboxClaimCycling | null = null;

  /** The outage so far, or null when there is none. */
  get current(): InboxSessionOutage | null {
    return this.seen;
  }

  /** Claims given back for leases lost before their handler since a handler transaction last began. */
  get cycling(): InboxClaimCycling | null {
    return this.cycled;
  }

  /**
   * A handler transaction began (it got a session, its lease held): whatever outage the worker saw
   * is over, and its claims make progress again.
   */
  over(): void {
    this.startedAt = null;
    this.seen = null;
    this.cycled = null;
  }

  /** `claims` claims were given back (or left to their lease) for leases lost before their handler. */
  lostBeforeHandler(claims: number): void {
    if (claims <= 0) return;
    const at = new Date();
    this.cycled = {
      since: this.cycled?.since ?? at,
      lastAt: at,
      claims: (this.cycled?.claims ?? 0) + claims,
    };
  }

  /** A handler transaction got no session (`error` described): how long the outage has lasted (ms). */
  noSession(error: string): number {
    const now = performance.now();
    this.startedAt ??= now;
    const at = new Date();
    this.seen = {
      since: this.seen?.since ?? at,
      lastAt: at,
      lastError: error,
      transactions: (this.seen?.transactions ?? 0) + 1,
    };
    return now - this.startedAt;
  }
}
