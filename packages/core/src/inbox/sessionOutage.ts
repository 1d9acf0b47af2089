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
 * The one record of the worker's outage of the application's pool, shared by its lanes: from the
 * first handler transaction that got no session (sessionGone) until one begins. Its age makes a
 * claim given back in it due later (inboxOutageDelayMs, review 104); health reports it (review
 * 105). An outage is over only once one of the worker's handler transactions begins before it was
 * interrupted (a session lent after its deadline ends nothing: review 149): a worker
 * that claims nothing meanwhile still reports it.
 */
export class SessionOutage {
  /** performance.now() at the outage's start, or null when there is none. */
  private startedAt: number | null = null;
  private seen: InboxSessionOutage | null = null;

  /** The outage so far, or null when there is none. */
  get current(): InboxSessionOutage | null {
    return this.seen;
  }

  /** A handler transaction began (it got a session): whatever outage the worker saw is over. */
  over(): void {
    this.startedAt = null;
    this.seen = null;
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
